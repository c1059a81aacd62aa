# FreeCode sidecar, CLI and demo. `make demo` and `make test` work from a clean clone.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
# Real MCP servers and clients from npm, for interop tests and benchmarks.
NPM_DIR := $(CURDIR)/interop
NPM_STAMP := $(NPM_DIR)/node_modules/.freecode-stamp
export FREECODE_NPM := $(NPM_DIR)/node_modules
# The MCP conformance suite and the Node 22 it needs (npm serves Node as a
# package), for the server and client scenario tests.
CONFORMANCE_DIR := $(NPM_DIR)/conformance
CONFORMANCE_STAMP := $(CONFORMANCE_DIR)/node_modules/.freecode-stamp
export FREECODE_CONFORMANCE := $(CONFORMANCE_DIR)/node_modules

.PHONY: all build demo test test-go bench lint npm conformance clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/... ./examples/...

# npm ci only when the lockfile changed: the tree in interop/node_modules is the cache.
$(NPM_STAMP): $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	cd $(NPM_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

npm: $(NPM_STAMP)

$(CONFORMANCE_STAMP): $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json
	cd $(CONFORMANCE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

conformance: $(CONFORMANCE_STAMP)

# The demo runs the CLI on the repo's own demo MCP server, then a scripted
# frontend session through the sidecar (examples/frontend), with a temporary
# config and HOME: never the user's own ~/.freecode.
demo: build
	@./scripts/demo.sh $(BIN)

test: npm conformance vscode-test vscode-integration e2e
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) test -race -count=1 ./...

bench: npm build
	$(GO) test -run '^$$' -bench . -benchtime 3s ./...

lint:
	$(GO) vet ./...
	gofmt -l $$(git ls-files '*.go')

clean:
	rm -rf $(BIN) editors/vscode/dist editors/vscode/out editors/vscode/bin editors/vscode/test-output

include editors/vscode/vscode.mk
