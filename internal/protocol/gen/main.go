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
	"reflect"
	"slices"
	"strconv"
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

// named is a type of the package the TypeScript declares.
type named struct {
	obj  *types.TypeName
	deps []*types.TypeName // what its check refers to, so must come first
}

// file writes the TypeScript.
func (g *gen) file() ([]byte, error) {
	ms, err := g.methods()
	if err != nil {
		return nil, err
	}
	// The roots: every type a method names, and every struct whose fields
	// all have a JSON name.
	var roots []*types.TypeName
	for _, m := range ms {
		for _, t := range []types.Type{m.params, m.result} {
			if t == nil {
				continue
			}
			tn, ok := typeName(t)
			if !ok || tn.Pkg() != g.pkg {
				return nil, fmt.Errorf("method %s: params and result must be types of %s, not %s", m.name, pkgPath, t)
			}
			roots = append(roots, tn)
		}
	}
	scope := g.pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || !tn.Exported() || tn.IsAlias() {
			continue
		}
		if st, ok := tn.Type().Underlying().(*types.Struct); ok && wire(st) {
			roots = append(roots, tn)
		}
	}
	order, err := g.order(roots)
	if err != nil {
		return nil, err
	}

	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("// Code generated by internal/protocol/gen from internal/protocol; DO NOT EDIT.\n")
	w("//\n")
	w("// The frontend protocol of freecode-serve (docs/protocol.md) as the TypeScript\n")
	w("// frontends see it: its names, its types with their checks, and its method\n")
	w("// table. The Go package is its source: change the Go, then run\n")
	w("// `go generate ./internal/protocol`.\n\n")
	w("import { anyValue, arrayOf, bool, kindOf, num, obj, oneOf, openObj, opt, recordOf, req, str, type Check } from './check';\n")

	if err := g.constants(w); err != nil {
		return nil, err
	}
	for _, n := range order {
		if err := g.declare(w, n.obj); err != nil {
			return nil, err
		}
	}
	g.table(w, ms)

	w("\n/** checks are the checks of the types above, by name: what test/fixtures holds examples of. */\n")
	w("export const checks: Record<string, Check<unknown>> = {\n")
	for _, n := range order {
		w("\t%s: %s as Check<unknown>,\n", n.obj.Name(), n.obj.Name())
	}
	w("};\n")
	return b.Bytes(), nil
}

// wire reports whether a struct is a wire type: it has fields, and each
// has a JSON name.
func wire(st *types.Struct) bool {
	if st.NumFields() == 0 {
		return false
	}
	for i := range st.NumFields() {
		if _, ok := reflect.StructTag(st.Tag(i)).Lookup("json"); !ok {
			return false
		}
	}
	return true
}

// typeName returns the declared name of t: the alias itself for an alias.
func typeName(t types.Type) (*types.TypeName, bool) {
	switch t := t.(type) {
	case *types.Alias:
		return t.Obj(), true
	case *types.Named:
		return t.Obj(), true
	}
	return nil, false
}

// order lists the types reachable from roots, each after the types its
// check refers to, otherwise in the order they are first met.
func (g *gen) order(roots []*types.TypeName) ([]named, error) {
	var out []named
	state := map[*types.TypeName]int{} // 1 visiting, 2 done
	var visit func(tn *types.TypeName) error
	visit = func(tn *types.TypeName) error {
		switch state[tn] {
		case 1:
			return fmt.Errorf("%s refers to itself", tn.Name())
		case 2:
			return nil
		}
		state[tn] = 1
		deps, err := g.deps(tn)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := visit(d); err != nil {
				return err
			}
		}
		state[tn] = 2
		out = append(out, named{obj: tn, deps: deps})
		return nil
	}
	for _, r := range roots {
		if err := visit(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// deps are the types of the package a declared type's check refers to.
func (g *gen) deps(tn *types.TypeName) ([]*types.TypeName, error) {
	if tn.IsAlias() {
		if g.rawAlias(tn) {
			return nil, nil
		}
		target, ok := typeName(tn.Type().(*types.Alias).Rhs())
		if !ok || target.Pkg() != g.pkg {
			return nil, fmt.Errorf("alias %s: only aliases of this package's types or of json.RawMessage are supported", tn.Name())
		}
		return []*types.TypeName{target}, nil
	}
	st, ok := tn.Type().Underlying().(*types.Struct)
	if !ok {
		return nil, nil
	}
	var out []*types.TypeName
	var walk func(t types.Type)
	walk = func(t types.Type) {
		switch t := t.(type) {
		case *types.Alias:
			if t.Obj().Pkg() == g.pkg {
				if !slices.Contains(out, t.Obj()) {
					out = append(out, t.Obj())
				}
				return
			}
			walk(types.Unalias(t))
		case *types.Named:
			if t.Obj().Pkg() == g.pkg && !slices.Contains(out, t.Obj()) {
				out = append(out, t.Obj())
			}
		case *types.Pointer:
			walk(t.Elem())
		case *types.Slice:
			walk(t.Elem())
		case *types.Map:
			walk(t.Elem())
		}
	}
	for i := range st.NumFields() {
		walk(st.Field(i).Type())
	}
	return out, nil
}

// rawAlias reports whether an alias stands for json.RawMessage.
func (g *gen) rawAlias(tn *types.TypeName) bool {
	n, ok := types.Unalias(tn.Type()).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "encoding/json" && n.Obj().Name() == "RawMessage"
}

// constants writes protocol.go's exported constants, block by block, each
// block's doc comment above it.
func (g *gen) constants(w func(string, ...any)) error {
	for _, f := range g.files {
		if filepath.Base(g.fset.Position(f.Pos()).Filename) != "protocol.go" {
			continue
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			w("\n")
			if text := strings.TrimSpace(gd.Doc.Text()); text != "" && gd.Lparen.IsValid() {
				for _, l := range strings.Split(text, "\n") {
					w("// %s\n", l)
				}
			}
			for _, s := range gd.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					c, ok := g.info.Defs[n].(*types.Const)
					if !ok || !c.Exported() {
						continue
					}
					if !gd.Lparen.IsValid() {
						g.docs[c] = gd.Doc.Text()
					}
					g.doc(w, "", c)
					switch c.Val().Kind() {
					case constant.String:
						w("export const %s = %s;\n", c.Name(), quote(constant.StringVal(c.Val())))
					case constant.Int:
						w("export const %s = %s;\n", c.Name(), c.Val().ExactString())
					default:
						return fmt.Errorf("constant %s: neither a string nor an integer", c.Name())
					}
				}
			}
		}
	}
	return nil
}

// declare writes a type and its check.
func (g *gen) declare(w func(string, ...any), tn *types.TypeName) error {
	name := tn.Name()
	w("\n")
	if tn.IsAlias() {
		if g.rawAlias(tn) {
			return g.declareRaw(w, tn)
		}
		target, _ := typeName(tn.Type().(*types.Alias).Rhs())
		g.doc(w, "", tn)
		w("export type %s = %s;\n", name, target.Name())
		w("export const %s = %s;\n", name, target.Name())
		return nil
	}
	switch u := tn.Type().Underlying().(type) {
	case *types.Struct:
		return g.declareStruct(w, tn, u)
	case *types.Basic:
		vals := g.values[tn]
		if u.Info()&types.IsString == 0 || len(vals) == 0 {
			return fmt.Errorf("%s: a named type on the wire must be a struct, or a string type with constants", name)
		}
		g.doc(w, "", tn)
		w("export type %s =\n", name)
		for i, c := range vals {
			g.doc(w, "\t", c)
			end := ""
			if i == len(vals)-1 {
				end = ";"
			}
			w("\t| %s%s\n", quote(constant.StringVal(c.Val())), end)
		}
		w("/** %sValues are the values of %s, in the Go source's order. */\n", name, name)
		w("export const %sValues: readonly %s[] = [", name, name)
		for i, c := range vals {
			if i > 0 {
				w(", ")
			}
			w("%s", quote(constant.StringVal(c.Val())))
		}
		w("];\n")
		w("export const %s: Check<%s> = oneOf(%sValues);\n", name, name, name)
		return nil
	}
	return fmt.Errorf("%s: unsupported type %s", name, tn.Type())
}

// declareRaw writes an alias of json.RawMessage as its directive says.
func (g *gen) declareRaw(w func(string, ...any), tn *types.TypeName) error {
	name := tn.Name()
	dir := g.directives[name]["json"]
	g.doc(w, "", tn)
	switch {
	case dir == "":
		w("export type %s = unknown;\n", name)
		w("export const %s: Check<%s> = anyValue;\n", name, name)
	case dir == "array":
		w("export type %s = unknown[];\n", name)
		w("export const %s: Check<%s> = arrayOf(anyValue);\n", name, name)
	case strings.HasPrefix(dir, "object"):
		fields := strings.Fields(strings.TrimPrefix(dir, "object"))
		w("export interface %s {\n", name)
		var checks []string
		for _, f := range fields {
			key, kind, ok := strings.Cut(f, ":")
			if !ok || !primitive(kind) {
				return fmt.Errorf("%s: //protocol:json object: want name:kind or name?:kind, kind string, number or boolean; got %q", name, f)
			}
			field, optional := strings.CutSuffix(key, "?")
			q := ""
			check := "req"
			if optional {
				q, check = "?", "opt"
			}
			w("\t%s%s: %s;\n", field, q, kind)
			checks = append(checks, fmt.Sprintf("%s: %s(%s)", field, check, kindCheck[kind]))
		}
		w("\t[key: string]: unknown;\n}\n")
		w("export const %s: Check<%s> = openObj<%s>({ %s });\n", name, name, name, strings.Join(checks, ", "))
	default:
		kinds := strings.Split(dir, "|")
		var quoted []string
		for _, k := range kinds {
			if !primitive(k) {
				return fmt.Errorf("%s: //protocol:json %q: want array, object [field:kind …], or kinds joined by | (string, number, boolean)", name, dir)
			}
			quoted = append(quoted, quote(k))
		}
		w("export type %s = %s;\n", name, strings.Join(kinds, " | "))
		w("export const %s: Check<%s> = kindOf<%s>(%s);\n", name, name, name, strings.Join(quoted, ", "))
	}
	return nil
}

var kindCheck = map[string]string{"string": "str", "number": "num", "boolean": "bool"}

func primitive(kind string) bool { _, ok := kindCheck[kind]; return ok }

// declareStruct writes an interface and its check.
func (g *gen) declareStruct(w func(string, ...any), tn *types.TypeName, st *types.Struct) error {
	name := tn.Name()
	g.doc(w, "", tn)
	if st.NumFields() == 0 {
		w("export type %s = Record<string, never>;\n", name)
		w("export const %s: Check<%s> = obj<%s>({});\n", name, name, name)
		return nil
	}
	type field struct {
		index          int
		key, ts, check string
		optional       bool
	}
	var fields []field
	for i := range st.NumFields() {
		f := st.Field(i)
		if f.Embedded() {
			return fmt.Errorf("%s.%s: embedded fields are not supported", name, f.Name())
		}
		if !f.Exported() {
			continue
		}
		tag := reflect.StructTag(st.Tag(i)).Get("json")
		key, opts, _ := strings.Cut(tag, ",")
		if key == "-" && opts == "" {
			continue
		}
		if key == "" {
			key = f.Name()
		}
		optional := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		if _, ok := f.Type().(*types.Pointer); ok && !optional {
			return fmt.Errorf("%s.%s: a pointer without omitempty would be null on the wire", name, f.Name())
		}
		ts, check, err := g.ts(f.Type())
		if err != nil {
			return fmt.Errorf("%s.%s: %w", name, f.Name(), err)
		}
		fields = append(fields, field{index: i, key: key, ts: ts, check: check, optional: optional})
	}
	_, open := g.directives[name]["open"]
	w("export interface %s {\n", name)
	for _, f := range fields {
		g.doc(w, "\t", st.Field(f.index))
		q := ""
		if f.optional {
			q = "?"
		}
		w("\t%s%s: %s;\n", property(f.key), q, f.ts)
	}
	ctor := "obj"
	if open {
		w("\t/** MCP's: what a newer MCP adds passes as it is. */\n")
		w("\t[key: string]: unknown;\n")
		ctor = "openObj"
	}
	w("}\n")
	w("export const %s: Check<%s> = %s<%s>({\n", name, name, ctor, name)
	for _, f := range fields {
		fn := "req"
		if f.optional {
			fn = "opt"
		}
		w("\t%s: %s(%s),\n", property(f.key), fn, f.check)
	}
	w("});\n")
	return nil
}

// ts returns the TypeScript type of a field's Go type, and its check.
func (g *gen) ts(t types.Type) (ts, check string, err error) {
	switch t := t.(type) {
	case *types.Alias:
		if t.Obj().Pkg() == g.pkg {
			return t.Obj().Name(), t.Obj().Name(), nil
		}
		return g.ts(types.Unalias(t))
	case *types.Named:
		obj := t.Obj()
		switch {
		case obj.Pkg() == g.pkg:
			if b, ok := t.Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 && len(g.values[obj]) == 0 {
				return "string", "str", nil
			}
			return obj.Name(), obj.Name(), nil
		case obj.Pkg().Path() == "time" && obj.Name() == "Time":
			return "string", "str", nil // RFC 3339
		case obj.Pkg().Path() == "encoding/json" && obj.Name() == "RawMessage":
			return "unknown", "anyValue", nil
		}
		return "", "", fmt.Errorf("%s: a type of another package", t)
	case *types.Basic:
		switch {
		case t.Info()&types.IsString != 0:
			return "string", "str", nil
		case t.Info()&types.IsBoolean != 0:
			return "boolean", "bool", nil
		case t.Info()&types.IsNumeric != 0:
			return "number", "num", nil
		}
	case *types.Pointer:
		return g.ts(t.Elem())
	case *types.Slice:
		ts, check, err := g.ts(t.Elem())
		if err != nil {
			return "", "", err
		}
		if strings.Contains(ts, " ") {
			ts = "(" + ts + ")"
		}
		return ts + "[]", "arrayOf(" + check + ")", nil
	case *types.Map:
		if k, ok := t.Key().Underlying().(*types.Basic); !ok || k.Info()&types.IsString == 0 {
			return "", "", fmt.Errorf("%s: a map's key must be a string", t)
		}
		ts, check, err := g.ts(t.Elem())
		if err != nil {
			return "", "", err
		}
		return "Record<string, " + ts + ">", "recordOf(" + check + ")", nil
	case *types.Interface:
		if t.Empty() {
			return "unknown", "anyValue", nil
		}
	}
	return "", "", fmt.Errorf("unsupported type %s", t)
}

// table writes the method table: a map of types and a map of checks per
// sender and kind.
func (g *gen) table(w func(string, ...any), ms []method) {
	groups := []struct {
		from, typ, value, what string
		notify                 bool
	}{
		{"Frontend", "FrontendRequests", "frontendRequests", "the requests a frontend sends the sidecar", false},
		{"Frontend", "FrontendNotifications", "frontendNotifications", "the notifications a frontend sends the sidecar", true},
		{"Sidecar", "SidecarRequests", "sidecarRequests", "the requests the sidecar sends a frontend", false},
		{"Sidecar", "SidecarNotifications", "sidecarNotifications", "the notifications the sidecar sends its frontends", true},
	}
	for _, gr := range groups {
		var these []method
		for _, m := range ms {
			if m.from == gr.from && (m.result == nil) == gr.notify {
				these = append(these, m)
			}
		}
		if len(these) == 0 {
			continue
		}
		tsName := func(t types.Type) string { tn, _ := typeName(t); return tn.Name() }
		w("\n")
		if gr.notify {
			w("/** %s are %s, by method: their params. */\n", gr.typ, gr.what)
		} else {
			w("/** %s are %s, by method: their params and results. */\n", gr.typ, gr.what)
		}
		w("export interface %s {\n", gr.typ)
		for _, m := range these {
			if c, ok := g.pkg.Scope().Lookup(m.constName).(*types.Const); ok {
				g.doc(w, "\t", c)
			}
			if gr.notify {
				w("\t%s: %s;\n", quote(m.name), tsName(m.params))
			} else {
				w("\t%s: { params: %s; result: %s };\n", quote(m.name), tsName(m.params), tsName(m.result))
			}
		}
		w("}\n")
		if gr.notify {
			w("export const %s: { [M in keyof %s]: Check<%s[M]> } = {\n", gr.value, gr.typ, gr.typ)
			for _, m := range these {
				w("\t%s: %s,\n", quote(m.name), tsName(m.params))
			}
		} else {
			w("export const %s: { [M in keyof %s]: { params: Check<%s[M]['params']>; result: Check<%s[M]['result']> } } = {\n", gr.value, gr.typ, gr.typ, gr.typ)
			for _, m := range these {
				w("\t%s: { params: %s, result: %s },\n", quote(m.name), tsName(m.params), tsName(m.result))
			}
		}
		w("};\n")
	}
}

// doc writes obj's doc comment as JSDoc, indented.
func (g *gen) doc(w func(string, ...any), indent string, obj types.Object) {
	text := strings.TrimSpace(g.docs[obj])
	if text == "" {
		return
	}
	text = strings.ReplaceAll(text, "*/", "*\\/")
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		w("%s/** %s */\n", indent, lines[0])
		return
	}
	w("%s/**\n", indent)
	for _, l := range lines {
		if l == "" {
			w("%s *\n", indent)
		} else {
			w("%s * %s\n", indent, l)
		}
	}
	w("%s */\n", indent)
}

// property is a key as a TypeScript property name: quoted unless it is an
// identifier.
func property(key string) string {
	for i, r := range key {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return quote(key)
		}
	}
	return key
}

// quote is a TypeScript string literal in single quotes.
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, "'", `\'`) + "'"
}
