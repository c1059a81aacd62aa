package main

import (
	"io/fs"

	"github.com/freecode/freecode/web"
)

// webFiles is the page a sidecar listening on ws: serves at /: package
// web's embedded files, the FreeCode MCP page.
var webFiles fs.FS = web.Files
