# The FreeCode MCP page (web/). Included by the top-level Makefile after
# editors/vscode/vscode.mk, whose npm tree (esbuild, typescript,
# vscode-jsonrpc, playwright-core) and Debian chromium it uses.
#
#   make web        rebuild web/static/app.js from web/src and the shared frontend/src; commit it
#   make web-test   type-check, the import-cycle check (with frontend/src), the committed bundle is what
#                   the sources build (else: stale), unit tests
#   make web-e2e    `freecode web --no-browser` on the demo server, driven in headless Chromium, and an
#                   install from the fixture MCP Registry (internal/registry/registrytest) through the page
#   make web-screenshots  the same, copying the README's screenshots into docs/images/web

WEB_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
WEB_E2E_OUT ?= $(WEB_DIR)/test-output/e2e

.PHONY: web web-test web-e2e web-screenshots

web: $(VSCODE_STAMP)
	node $(WEB_DIR)/build.mjs

web-test: $(VSCODE_STAMP)
	$(VSCODE_DIR)/node_modules/.bin/tsc -p $(WEB_DIR) --noEmit
	node $(VSCODE_DIR)/importCycles.mjs $(WEB_DIR)/src $(FRONTEND_DIR)/src
	node $(WEB_DIR)/build.mjs --check
	node $(WEB_DIR)/build.mjs --tests && node --test --test-reporter=spec $(WEB_DIR)/out/test/

# The fixture MCP Registry the install step installs from is a test program:
# built beside the test's output, never into $(BIN).
WEB_E2E_BIN := $(WEB_DIR)/test-output/bin
WEB_E2E_REGISTRY := $(WEB_E2E_BIN)/registry-fixture-server

web-e2e: build npm e2e-apt $(VSCODE_STAMP)
	$(GO) build -o $(WEB_E2E_BIN)/ ./internal/registry/registrytest/cmd/registry-fixture-server
	node $(WEB_DIR)/e2e/run.mjs --bin $(BIN) --npm $(FREECODE_NPM) --registry-server $(WEB_E2E_REGISTRY) --out $(WEB_E2E_OUT)

# The README's pictures of the page, from a run of the e2e.
web-screenshots: build npm e2e-apt $(VSCODE_STAMP)
	$(GO) build -o $(WEB_E2E_BIN)/ ./internal/registry/registrytest/cmd/registry-fixture-server
	node $(WEB_DIR)/e2e/run.mjs --bin $(BIN) --npm $(FREECODE_NPM) --registry-server $(WEB_E2E_REGISTRY) --out $(WEB_E2E_OUT) --docs $(CURDIR)/docs/images/web
