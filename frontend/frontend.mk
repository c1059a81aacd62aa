# The TypeScript both frontends share (frontend/): the protocol generated
# from internal/protocol and the session, model and words that the VS Code
# extension and the web page both run. Included by the top-level Makefile
# after editors/vscode/vscode.mk, whose npm tree (typescript, esbuild,
# vscode-jsonrpc) it uses: the package has no node_modules of its own.
#
#   make frontend-test  type-check (src with neither DOM nor Node: it runs in both), the import-cycle
#                       check (it imports no frontend), the headless unit tests (node --test)

FRONTEND_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

.PHONY: frontend-test

frontend-test: $(VSCODE_STAMP)
	$(VSCODE_DIR)/node_modules/.bin/tsc -p $(FRONTEND_DIR)
	$(VSCODE_DIR)/node_modules/.bin/tsc -p $(FRONTEND_DIR)/test
	node $(VSCODE_DIR)/importCycles.mjs $(FRONTEND_DIR)/src
	rm -rf $(FRONTEND_DIR)/out
	NODE_PATH=$(VSCODE_DIR)/node_modules $(VSCODE_DIR)/node_modules/.bin/esbuild $(FRONTEND_DIR)/test/*.test.ts \
		--bundle --platform=node --format=cjs --target=node20 --sourcemap=inline --log-level=warning --outdir=$(FRONTEND_DIR)/out/test
	node --test --test-reporter=spec $(FRONTEND_DIR)/out/test/
