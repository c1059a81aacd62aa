#!/usr/bin/env bash
# demo.sh BINDIR: FreeCode's CLI on the repo's own demo MCP server, end to end.
# Called by `make demo` after `go build -o BINDIR/ ./cmd/... ./examples/...`.
# Every step uses a config file in a temporary directory (FREECODE_CONFIG),
# never the user's own ~/.freecode/config.json. Exits non-zero if a step fails.
set -uo pipefail

bindir=${1:?usage: demo.sh BINDIR}
bindir=$(cd "$bindir" && pwd) || exit 1
for b in freecode demo-server; do
	if [[ ! -x $bindir/$b ]]; then
		echo "demo: $bindir/$b is missing; run make build" >&2
		exit 1
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/freecode-demo.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export FREECODE_CONFIG=$tmp/config.json
# The user's HOME is not needed by any step; point it away so nothing can
# read or write the user's own files by accident.
export HOME=$tmp

bold='' plain=''
if [[ -t 1 ]]; then
	bold=$'\033[1m' plain=$'\033[0m'
fi

step() {
	local title=$1
	shift
	printf '\n%s== %s%s\n$ freecode %s\n' "$bold" "$title" "$plain" "$*"
	if ! "$bindir/freecode" "$@"; then
		echo "demo: step failed: freecode $*" >&2
		return 1
	fi
}

echo "Config for this demo: $FREECODE_CONFIG"

# The command after -- is argv, so a bindir with spaces stays one word.
step "Add the demo server" mcp add demo local -- "$bindir/demo-server" || exit 1
step "List configured servers" mcp list || exit 1
step "Connect: initialize + tools/list, then stop" mcp start demo || exit 1
step "Its tools, with annotations" mcp tools demo || exit 1

# --- freecode tools … steps (orchestrator) go here ---------------------------
# Add them as `step "<title>" tools <args> || exit 1`; they run against the same
# temporary config and the "demo" server added above.
# -----------------------------------------------------------------------------

printf '\n%sDemo finished: every step passed.%s\n' "$bold" "$plain"
