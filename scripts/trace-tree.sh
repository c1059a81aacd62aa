#!/usr/bin/env bash
# trace-tree.sh JAEGER: one tool call's trace, as a tree, from a real trace
# backend (a maintainer's tool for the README's Telemetry section; make test
# does not run it). It starts Jaeger v2 on loopback (OTLP on 4317/4318, its
# query API on 16686), makes one call as a user does (`freecode tools call`
# of the demo server's destructive delete_file, --yes answering the
# permission prompt) with OTEL_EXPORTER_OTLP_ENDPOINT pointing at it, and
# prints the trace Jaeger's API returns: each span, its duration and the
# attributes that say what decided the call.
#
# JAEGER is a Jaeger v2 binary. The Go module proxy serves it: in a scratch
# module, `go get -tool github.com/jaegertracing/jaeger/cmd/jaeger@v1.75.0 &&
# go build -o jaeger github.com/jaegertracing/jaeger/cmd/jaeger` (about 9
# minutes on 2 cores). Its UI is not in the module (a placeholder page is
# served), so the trace is read from the API. Needs `go build -o bin/
# ./cmd/... ./examples/...` first (or FREECODE_BIN naming that directory).
set -uo pipefail
jaeger=${1:?usage: trace-tree.sh JAEGER}
root=$(cd "$(dirname "$0")/.." && pwd)
bindir=${FREECODE_BIN:-$root/bin}
for b in freecode demo-server; do
	[[ -x $bindir/$b ]] || { echo "trace-tree: $bindir/$b missing" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/freecode-trace.XXXXXX") || exit 1
jpid=
cleanup() {
	[[ -n $jpid ]] && kill -TERM "$jpid" 2>/dev/null && wait "$jpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/jaeger.yaml" <<'EOF'
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter]}
  telemetry: {metrics: {level: none}}
extensions:
  jaeger_query:
    storage: {traces: mem}
    http: {endpoint: 127.0.0.1:16686}
    grpc: {endpoint: 127.0.0.1:16685}
  jaeger_storage:
    backends: {mem: {memory: {max_traces: 100}}}
receivers:
  otlp:
    protocols:
      grpc: {endpoint: 127.0.0.1:4317}
      http: {endpoint: 127.0.0.1:4318}
processors:
  batch:
exporters:
  jaeger_storage_exporter: {trace_storage: mem}
EOF
"$jaeger" --config "$tmp/jaeger.yaml" >"$tmp/jaeger.log" 2>&1 &
jpid=$!
for _ in $(seq 100); do
	curl -sf http://127.0.0.1:16686/api/services >/dev/null && break
	kill -0 "$jpid" 2>/dev/null || { cat "$tmp/jaeger.log" >&2; exit 1; }
	sleep 0.2
done

# One call as a user makes it: a destructive tool, so the permission span
# (and its wait, answered by --yes) shows.
export HOME=$tmp FREECODE_CONFIG=$tmp/config.json
mkdir -p "$tmp/project" && cd "$tmp/project" || exit 1
"$bindir/freecode" mcp add demo local -- "$bindir/demo-server" >/dev/null || exit 1
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_SERVICE_NAME=freecode \
	OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
	"$bindir/freecode" tools call mcp__demo__delete_file --args '{"path":"docs/notes.md"}' --yes || exit 1

trace=
for _ in $(seq 50); do
	trace=$(curl -s 'http://127.0.0.1:16686/api/traces?service=freecode&operation=freecode.batch&limit=1' |
		python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; print(d[0]["traceID"] if d else "")')
	[[ -n $trace ]] && break
	sleep 0.2
done
[[ -n $trace ]] || { echo "trace-tree: no freecode.batch trace reached Jaeger" >&2; exit 1; }

curl -s "http://127.0.0.1:16686/api/traces/$trace" | python3 -c '
import json,sys
d=json.load(sys.stdin)["data"][0]
spans={s["spanID"]:s for s in d["spans"]}
kids={}
for s in d["spans"]:
    p=[r["spanID"] for r in s.get("references",[]) if r["refType"]=="CHILD_OF"]
    kids.setdefault(p[0] if p else None,[]).append(s)
def show(s,depth):
    tags={t["key"]:t["value"] for t in s["tags"]}
    keep=["gen_ai.tool.name","freecode.permission.decision","freecode.permission.answer","freecode.outcome","mcp.method.name","mcp.protocol.version","network.transport","freecode.attempt"]
    a=", ".join("%s=%s"%(k,tags[k]) for k in keep if k in tags)
    print("%s%-*s %6d µs  %s"%("  "*depth,46-2*depth,s["operationName"],s["duration"],a))
    for c in sorted(kids.get(s["spanID"],[]),key=lambda x:x["startTime"]):
        show(c,depth+1)
for r in kids.get(None,[]): show(r,0)
'
