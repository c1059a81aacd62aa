package main

import "io/fs"

// webFiles is the page a sidecar listening on ws: serves at /: package
// web's embedded files (web.Files) once that package is on the branch
// (see docs/architecture.md); nil until then, and a sidecar without it
// serves the WebSocket alone.
var webFiles fs.FS
