package protocol

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// Each of FreeCode's own methods (a constant of protocol.go whose value
// starts with freecode/) is in Methods once, and Methods names no other:
// a method added without its types fails here, before the TypeScript
// generated from the table lacks it.
func TestMethodsTableIsComplete(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "protocol.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{} // value → name
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				if strings.HasPrefix(v, "freecode/") {
					consts[v] = n.Name
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, m := range Methods {
		if seen[m.Name] {
			t.Errorf("%s is in Methods twice", m.Name)
		}
		seen[m.Name] = true
		if consts[m.Name] == "" {
			t.Errorf("%s is in Methods but is no method constant of protocol.go", m.Name)
		}
		if got, ok := Lookup(m.Name); !ok || got.Name != m.Name {
			t.Errorf("Lookup(%q) = %v, %v", m.Name, got, ok)
		}
	}
	for v, name := range consts {
		if !seen[v] {
			t.Errorf("%s (%s) is not in Methods: give it its params and result there", name, v)
		}
	}
}

// Every params and result is a JSON object, {} at the least: a frontend
// sends {} for a request that takes none, never null or an array.
func TestMethodsParamsAreObjects(t *testing.T) {
	for _, m := range Methods {
		for _, typ := range []reflect.Type{m.Params, m.Result} {
			if typ == nil {
				continue
			}
			b, err := json.Marshal(reflect.New(typ).Elem().Interface())
			if err != nil || len(b) == 0 || b[0] != '{' {
				t.Errorf("%s: %s encodes as %s (%v), not an object", m.Name, typ, b, err)
			}
		}
	}
}

// The TypeScript the frontends compile against is what the generator
// writes from the Go now: a change here without `go generate
// ./internal/protocol` fails.
func TestGeneratedTypeScriptIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	out, err := exec.Command("go", "run", "./gen", "-check").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
