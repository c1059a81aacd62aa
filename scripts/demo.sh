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

# The orchestrator: the same calls a model's turn would make, through
# validation, permission rules and batching.
step "Every tool as the orchestrator registers it (R read-only, D destructive)" tools list || exit 1
printf '\n%s== %s%s\n$ freecode tools defs --format anthropic | head -c 300\n' "$bold" "Provider-facing definitions, self-contained, with their hash" "$plain"
"$bindir/freecode" tools defs --format anthropic >"$tmp/defs.json" || exit 1
printf '%s…\n' "$(head -c 300 "$tmp/defs.json")"
step "A read-only call runs without asking" tools call mcp__demo__search --args '{"query":"func main"}' || exit 1
step "A slow call relays progress (not read-only, so approved with --yes)" tools call mcp__demo__build --args '{"steps":3,"seconds":0.3}' --yes || exit 1

# expect_fail: the step must fail, the way a user would see it fail.
expect_fail() {
	local title=$1
	shift
	printf '\n%s== %s%s\n$ freecode %s\n' "$bold" "$title" "$plain" "$*"
	if "$bindir/freecode" "$@" </dev/null; then
		echo "demo: step should have failed: freecode $*" >&2
		return 1
	fi
}
expect_fail "Invalid arguments never reach the server" tools call mcp__demo__create_issue --args '{"title":5}' || exit 1
expect_fail "A destructive call with no one to ask is denied, naming the rule to add" \
	tools call mcp__demo__delete_file --args '{"path":"README.md"}' || exit 1
step "The same call, approved on the command line" tools call mcp__demo__delete_file --args '{"path":"README.md"}' --yes || exit 1

printf '\n%sDemo finished: every step passed.%s\n' "$bold" "$plain"
