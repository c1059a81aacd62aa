// Command gen writes the frontend protocol in TypeScript from its Go
// source, internal/protocol, the way gopls generates its command API from
// Go: the TypeScript is never written by hand. `go generate
// ./internal/protocol` runs it; `go run ./internal/protocol/gen -check`
// fails when the file it would write is not the one on disk (make test).
//
// It type-checks the package (go/parser, go/types, and the export data
// `go list -export` builds for its imports) and writes one file:
//
//   - the constants of protocol.go: the version, the method names and the
//     error codes;
//   - for each wire type (a struct whose fields all have a JSON name, or a
//     type a method of the table names), a TypeScript interface with its Go
//     doc comments, and a run-time check of the same name (check.ts): a
//     field without omitempty or omitzero is required, a pointer is its
//     element, a map is a Record, time.Time an RFC 3339 string; a field the
//     type does not have is refused, unless a //protocol:open line says
//     the type is MCP's, passed as the server sent it;
//   - for each string type with constants of its own, a union of the
//     constants' values, its values as an array, and a check;
//   - for each alias of json.RawMessage, what its //protocol:json directive
//     says the JSON is (without one: unknown);
//   - the method table (Methods): for each sender, the methods by name with
//     their params and results, as types and as checks.
//
// What Go cannot say is refused rather than guessed: a type from another
// package (but time.Time and json.RawMessage), an embedded field, a map
// whose key is not a string.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const pkgPath = "github.com/freecode/freecode/internal/protocol"

func main() {
	log.SetFlags(0)
	log.SetPrefix("protocol/gen: ")
	out := flag.String("out", "../../frontend/src/protocol.gen.ts", "the file to write, relative to internal/protocol")
	check := flag.Bool("check", false, "write nothing: fail if the file is not what would be written")
	flag.Parse()

	g, dir, err := load()
	if err != nil {
		log.Fatal(err)
	}
	src, err := g.file()
	if err != nil {
		log.Fatal(err)
	}
	path := *out
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	if *check {
		have, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(have, src) {
			rel, _ := filepath.Rel(filepath.Join(dir, "..", ".."), path)
			log.Fatalf("%s is not what internal/protocol generates now: run 'go generate ./internal/protocol' and commit it", rel)
		}
		return
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// load type-checks internal/protocol from source, its imports from the
// export data the go command builds (no dependency beyond the standard
// library and the go command).
func load() (*gen, string, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export,Dir,GoFiles", pkgPath)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("go list: %w", err)
	}
	type listed struct {
		ImportPath, Export, Dir string
		GoFiles                 []string
	}
	exports := map[string]string{}
	var self listed
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, "", fmt.Errorf("go list: %w", err)
		}
		exports[p.ImportPath] = p.Export
		if p.ImportPath == pkgPath {
			self = p
		}
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range self.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(self.Dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, "", err
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}, Instances: map[*ast.Ident]types.Instance{}}
	pkg, err := (&types.Config{Importer: imp}).Check(pkgPath, fset, files, info)
	if err != nil {
		return nil, "", err
	}
	return newGen(pkg, files, fset, info), self.Dir, nil
}

// gen holds what the TypeScript is written from.
type gen struct {
	pkg   *types.Package
	fset  *token.FileSet
	files []*ast.File
	info  *types.Info
	// docs are the doc comments of types, fields and constants.
	docs map[types.Object]string
	// directives are the //protocol: lines of types' doc comments, by
	// type name, then directive: "json" (an alias of json.RawMessage),
	// "open" (a struct of MCP's whose other fields may come too).
	directives map[string]map[string]string
	// values are the constants of each string type, in source order.
	values map[*types.TypeName][]*types.Const
}

// newGen collects the doc comments, the //protocol: directives and
// the constants of each string type.
func newGen(pkg *types.Package, files []*ast.File, fset *token.FileSet, info *types.Info) *gen {
	g := &gen{pkg: pkg, fset: fset, files: files, info: info, docs: map[types.Object]string{}, directives: map[string]map[string]string{}, values: map[*types.TypeName][]*types.Const{}}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range gd.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					doc := s.Doc
					if doc == nil && len(gd.Specs) == 1 {
						doc = gd.Doc
					}
					obj := g.info.Defs[s.Name]
					g.docs[obj] = doc.Text()
					g.directives[s.Name.Name] = directives(doc)
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							text := fl.Doc.Text()
							if text == "" {
								text = fl.Comment.Text()
							}
							for _, n := range fl.Names {
								g.docs[g.info.Defs[n]] = text
							}
						}
					}
				case *ast.ValueSpec:
					text := s.Doc.Text()
					if text == "" {
						text = s.Comment.Text()
					}
					for _, n := range s.Names {
						obj := g.info.Defs[n]
						g.docs[obj] = text
						c, ok := obj.(*types.Const)
						if !ok {
							continue
						}
						if tn := stringType(c.Type()); tn != nil && tn.Pkg() == g.pkg {
							g.values[tn] = append(g.values[tn], c)
						}
					}
				}
			}
		}
	}
	return g
}

// directives returns the //protocol:NAME lines of doc: what each says, by
// name.
func directives(doc *ast.CommentGroup) map[string]string {
	out := map[string]string{}
	if doc == nil {
		return out
	}
	for _, c := range doc.List {
		if rest, ok := strings.CutPrefix(c.Text, "//protocol:"); ok {
			name, arg, _ := strings.Cut(rest, " ")
			out[name] = strings.TrimSpace(arg)
		}
	}
	return out
}

// stringType returns the named string type t is, if it is one.
func stringType(t types.Type) *types.TypeName {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return nil
	}
	if b, ok := n.Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
		return n.Obj()
	}
	return nil
}

// method is one entry of the Go table Methods.
type method struct {
	name, constName string
	from            string
	params, result  types.Type // result nil: a notification
}

// methods reads the table Methods: each entry a call of request[P, R] or
// notification[P], its sender and its method's constant.
func (g *gen) methods() ([]method, error) {
	var out []method
	for _, f := range g.files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				if len(vs.Names) != 1 || vs.Names[0].Name != "Methods" {
					continue
				}
				lit, ok := vs.Values[0].(*ast.CompositeLit)
				if !ok {
					return nil, fmt.Errorf("Methods is not a composite literal")
				}
				for _, e := range lit.Elts {
					m, err := g.entry(e)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", g.fset.Position(e.Pos()), err)
					}
					out = append(out, m)
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no table Methods in %s", pkgPath)
	}
	return out, nil
}

func (g *gen) entry(e ast.Expr) (method, error) {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 2 {
		return method{}, fmt.Errorf("an entry of Methods must be request[P, R](sender, name) or notification[P](sender, name)")
	}
	var fn *ast.Ident
	switch x := call.Fun.(type) {
	case *ast.IndexExpr:
		fn, _ = x.X.(*ast.Ident)
	case *ast.IndexListExpr:
		fn, _ = x.X.(*ast.Ident)
	}
	if fn == nil {
		return method{}, fmt.Errorf("an entry of Methods must instantiate request or notification")
	}
	args := g.info.Instances[fn].TypeArgs
	from, ok := g.info.Uses[identOf(call.Args[0])].(*types.Const)
	if !ok {
		return method{}, fmt.Errorf("the sender must be Frontend or Sidecar")
	}
	nameConst, ok := g.info.Uses[identOf(call.Args[1])].(*types.Const)
	if !ok || nameConst.Val().Kind() != constant.String {
		return method{}, fmt.Errorf("the method must be one of protocol.go's constants")
	}
	m := method{name: constant.StringVal(nameConst.Val()), constName: nameConst.Name(), from: from.Name(), params: args.At(0)}
	switch {
	case fn.Name == "request" && args.Len() == 2:
		m.result = args.At(1)
	case fn.Name == "notification" && args.Len() == 1:
	default:
		return method{}, fmt.Errorf("an entry of Methods must be request[P, R] or notification[P]")
	}
	return m, nil
}

func identOf(e ast.Expr) *ast.Ident {
	switch x := e.(type) {
	case *ast.Ident:
		return x
	case *ast.SelectorExpr:
		return x.Sel
	}
	return nil
}
