// Package web holds the FreeCode MCP page that a listening sidecar serves at
// "/" to browser frontends. The page is a committed bundle (web.mk says how
// it is built and checked: make web, make web-test, make web-e2e; see also
// docs/architecture.md), embedded so that `go install` carries it.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var embedded embed.FS

// Files is the page's static files, rooted so that "index.html" is the page.
var Files fs.FS = mustSub(embedded, "static")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
