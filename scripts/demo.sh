#!/usr/bin/env bash
# demo.sh BINDIR: FreeCode's CLI on the repo's own demo MCP server, end to end,
# then a scripted session through the sidecar (examples/frontend) with the
# CLI's live commands beside it.
# Called by `make demo` after `go build -o BINDIR/ ./cmd/... ./examples/...`.
# Every step uses a config file in a temporary directory (FREECODE_CONFIG) and
# a temporary HOME, never the user's own ~/.freecode. Exits non-zero if a step
# fails.
set -uo pipefail

bindir=${1:?usage: demo.sh BINDIR}
bindir=$(cd "$bindir" && pwd) || exit 1
for b in freecode demo-server frontend; do
	if [[ ! -x $bindir/$b ]]; then
		echo "demo: $bindir/$b is missing; run make build" >&2
		exit 1
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/freecode-demo.XXXXXX") || exit 1
sidecar_pid=
cleanup() {
	if [[ -n $sidecar_pid ]]; then
		kill -TERM "$sidecar_pid" 2>/dev/null
		wait "$sidecar_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
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
step "Add the demo server" mcp add demo local -- "$bindir/demo-server" --tasks || exit 1
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
step "A long call runs as an MCP task: the CLI follows its status to the end" tools call mcp__demo__long_build --args '{"steps":3,"seconds":1.5,"ask":false}' --yes || exit 1

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

# The sidecar: what an editor runs over stdio, here listening on a socket
# so that the CLI's live commands and the example frontend share it.
section() {
	printf '\n%s### %s%s\n' "$bold" "$1" "$plain"
}
section "The sidecar: one process that keeps the servers running for every frontend"
printf '\n%s== %s%s\n$ freecode %s\n' "$bold" "Before it runs, the live CLI says so" "$plain" "mcp status"
"$bindir/freecode" mcp status
if [[ $? -ne 3 ]]; then
	echo "demo: mcp status should exit 3 without a sidecar" >&2
	exit 1
fi

mkdir -p "$tmp/project"
printf '\n%s== %s%s\n$ freecode serve --listen unix:%s --project %s &\n' "$bold" "Start a sidecar on a local socket" "$plain" "$tmp/serve.sock" "$tmp/project"
"$bindir/freecode" serve --listen "unix:$tmp/serve.sock" --project "$tmp/project" 2>"$tmp/sidecar.log" &
sidecar_pid=$!
# It writes serve.json (address, pid, token; mode 0600) once it listens.
for _ in $(seq 100); do
	[[ -e $HOME/.freecode/serve.json ]] && break
	if ! kill -0 "$sidecar_pid" 2>/dev/null; then
		echo "demo: the sidecar exited:" >&2
		cat "$tmp/sidecar.log" >&2
		exit 1
	fi
	sleep 0.1
done
if [[ ! -e $HOME/.freecode/serve.json ]]; then
	echo "demo: the sidecar wrote no serve.json within 10 s" >&2
	exit 1
fi
echo "listening; $HOME/.freecode/serve.json holds its address, pid and token"

step "Start a server in the sidecar: it answers once the server is connected" mcp start demo || exit 1
step "The live status of every server, as the sidecar has it" mcp status || exit 1

printf '\n%s== %s%s\n$ frontend --connect\n' "$bold" "A scripted frontend session (examples/frontend), every message printed" "$plain"
if ! "$bindir/frontend" --connect; then
	echo "demo: the frontend session failed; the sidecar's log:" >&2
	cat "$tmp/sidecar.log" >&2
	exit 1
fi

step "The server the config edit added runs in the sidecar" mcp status demo2 || exit 1

printf '\n%s== %s%s\n$ kill -TERM %s\n' "$bold" "Stop the sidecar: it stops every server and removes serve.json" "$plain" "$sidecar_pid"
kill -TERM "$sidecar_pid"
wait "$sidecar_pid"
sidecar_pid=
if [[ -e $HOME/.freecode/serve.json ]]; then
	echo "demo: the sidecar left serve.json behind" >&2
	exit 1
fi
echo "stopped"

printf '\n%sDemo finished: every step passed.%s\n' "$bold" "$plain"
