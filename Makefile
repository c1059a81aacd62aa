# FreeCode sidecar, CLI and demo. `make demo` and `make test` work from a clean clone.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
# Real MCP servers and clients from npm, for interop tests and benchmarks.
NPM_DIR := $(CURDIR)/interop
NPM_STAMP := $(NPM_DIR)/node_modules/.freecode-stamp
export FREECODE_NPM := $(NPM_DIR)/node_modules
# The MCP conformance suite and the Node 22 it needs (npm serves Node as a
# package), for the server and client scenario tests. FREECODE_CONFORMANCE
# may name a node_modules where they are installed already, used as it is.
CONFORMANCE_DIR := $(NPM_DIR)/conformance
FREECODE_CONFORMANCE ?= $(CONFORMANCE_DIR)/node_modules
export FREECODE_CONFORMANCE
ifeq ($(FREECODE_CONFORMANCE),$(CONFORMANCE_DIR)/node_modules)
CONFORMANCE_STAMP := $(CONFORMANCE_DIR)/node_modules/.freecode-stamp
endif
# The suite's prerelease that pins what the 2026-07-28 revision requires
# (--requirements 2026-07-28), beside the release above, on its Node.
# FREECODE_CONFORMANCE_NEXT may name a node_modules holding it already.
CONFORMANCE_NEXT_DIR := $(NPM_DIR)/conformance-next
FREECODE_CONFORMANCE_NEXT ?= $(CONFORMANCE_NEXT_DIR)/node_modules
export FREECODE_CONFORMANCE_NEXT
ifeq ($(FREECODE_CONFORMANCE_NEXT),$(CONFORMANCE_NEXT_DIR)/node_modules)
CONFORMANCE_NEXT_STAMP := $(CONFORMANCE_NEXT_DIR)/node_modules/.freecode-stamp
endif
# The OpenTelemetry Collector the telemetry tests export to (package
# telemetry/otelcoltest): interop/otelcol, a module of its own built from
# the Collector's Go modules. Built once per hash of its go.mod, go.sum and
# main.go into the user's cache, which outlives the checkout (older builds
# are removed then). FREECODE_OTELCOL may name one built already.
OTELCOL_DIR := $(CURDIR)/interop/otelcol
OTELCOL_CACHE := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/freecode
OTELCOL_KEY := $(shell cat $(OTELCOL_DIR)/go.mod $(OTELCOL_DIR)/go.sum $(OTELCOL_DIR)/main.go | sha256sum | cut -c1-16)
OTELCOL_BIN := $(OTELCOL_CACHE)/otelcol-$(OTELCOL_KEY)/otelcol
FREECODE_OTELCOL ?= $(OTELCOL_BIN)
export FREECODE_OTELCOL

.PHONY: all build demo test test-go bench lint npm conformance-suite conformance sandbox-apt protocol-check otelcol clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/... ./examples/...

# npm ci only when the lockfile changed: the tree in interop/node_modules is the cache.
$(NPM_STAMP): $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	cd $(NPM_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

npm: $(NPM_STAMP)

$(CONFORMANCE_DIR)/node_modules/.freecode-stamp: $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json
	cd $(CONFORMANCE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(CONFORMANCE_NEXT_DIR)/node_modules/.freecode-stamp: $(CONFORMANCE_NEXT_DIR)/package.json $(CONFORMANCE_NEXT_DIR)/package-lock.json
	cd $(CONFORMANCE_NEXT_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

conformance-suite: $(CONFORMANCE_STAMP) $(CONFORMANCE_NEXT_STAMP)

$(OTELCOL_BIN):
	find $(OTELCOL_CACHE) -mindepth 1 -maxdepth 1 -name 'otelcol-*' ! -name 'otelcol-$(OTELCOL_KEY)' -exec rm -rf {} + 2>/dev/null || true
	mkdir -p $(dir $@)
	cd $(OTELCOL_DIR) && $(GO) build -trimpath -o $@.tmp . && mv $@.tmp $@

otelcol: $(FREECODE_OTELCOL)

# The suite's server scenarios against `freecode mcp serve`, and its client
# scenarios against FreeCode's client through interop/conformance-client, a
# test-only program that `make build` leaves out (its test runs the suite
# with the test binary as the client, driving FreeCode's mcp package or the
# freecode binary as a user would; the 2026-07-28 requirements with the
# prerelease). `make test` runs them too.
conformance: conformance-suite
	GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 -run 'Conformance' ./cmd/freecode ./interop/conformance-client ./examples/demo-server

# The demo runs the CLI on the repo's own demo MCP server, then a scripted
# frontend session through the sidecar (examples/frontend), with a temporary
# config and HOME: never the user's own ~/.freecode.
demo: build
	@./scripts/demo.sh $(BIN)

# bubblewrap, which sandboxes local servers on Linux: its tests skip without
# it, so `make test` installs it (Debian's package, as root) where it is
# missing. Elsewhere than Linux or where dpkg is not, nothing is done.
sandbox-apt:
	@if [ "$$(uname -s)" = Linux ] && command -v dpkg >/dev/null && ! command -v bwrap >/dev/null; then \
		echo "installing Debian packages: bubblewrap"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap; \
	fi

# The frontends' TypeScript protocol (frontend/src/protocol.gen.ts) is
# generated from internal/protocol: `go generate ./internal/protocol` writes
# it, and this fails when the committed file is not what it writes now.
protocol-check:
	$(GO) run ./internal/protocol/gen -check

test: protocol-check npm conformance-suite otelcol sandbox-apt frontend-test vscode-test vscode-integration e2e web-test web-e2e
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	@# The race runtime pauses a second at every exit of a binary built with
	@# it; off here for the tests and the copies of them they start (and
	@# internal/racetest for those FreeCode starts as servers).
	GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 ./...
	@# The hop's stage timing builds only with its tag: checked here, as ./... builds without it.
	$(GO) vet -tags hoptrace ./internal/hoptrace ./internal/protocol ./cmd/freecode-serve ./bench
	$(GO) test -count=1 -tags hoptrace ./internal/hoptrace

# The sidecar as it was before telemetry (the parent of issue 33's first
# commit), which BenchmarkTelemetryHop runs beside today's with telemetry
# off: built once, from the repository's history, into the cache.
TELEMETRY_BASE := 5d58505
BASELINE_SERVE := $(OTELCOL_CACHE)/serve-$(TELEMETRY_BASE)/freecode-serve

$(BASELINE_SERVE):
	rm -rf $(@D).src && mkdir -p $(@D).src
	git archive $(TELEMETRY_BASE) | tar -x -C $(@D).src
	cd $(@D).src && $(GO) build -o $(@D)/ ./cmd/freecode-serve
	rm -rf $(@D).src

bench: npm sandbox-apt build $(BASELINE_SERVE)
	FREECODE_BENCH_BASELINE=$(BASELINE_SERVE) $(GO) test -run '^$$' -bench . -benchtime 3s ./...

lint:
	$(GO) vet ./...
	gofmt -l $$(git ls-files '*.go')

clean:
	rm -rf $(BIN) frontend/out editors/vscode/dist editors/vscode/out editors/vscode/bin editors/vscode/test-output web/out web/test-output

include editors/vscode/vscode.mk
include frontend/frontend.mk
include web/web.mk
