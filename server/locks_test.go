package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// A lock's comment says which fields it guards: "mu guards the fields
// below" covers the fields that follow it up to the next blank line. None
// of those may be a value that synchronizes itself (a sync.Once, a
// WaitGroup, another lock, an atomic): such a field is never guarded by
// mu, and placing it there tells a reader to take mu for it.
func TestLockCommentsTellTheTruth(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, e.Name(), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			fields := st.Fields.List
			for i, f := range fields {
				if f.Doc == nil || !strings.Contains(f.Doc.Text(), "guards the fields below") {
					continue
				}
				checked++
				lock := fieldName(f)
				if !isSync(f.Type) {
					t.Errorf("%s: %s is said to guard fields but is no lock", fset.Position(f.Pos()), lock)
				}
				// The fields below: each starts (its comment included) on
				// the line after the one before it ends.
				end := fset.Position(f.End()).Line
				for _, g := range fields[i+1:] {
					start := g.Pos()
					if g.Doc != nil {
						start = g.Doc.Pos()
					}
					if fset.Position(start).Line != end+1 {
						break
					}
					if isSync(g.Type) {
						t.Errorf("%s: %s synchronizes itself, yet sits among the fields %s guards", fset.Position(g.Pos()), fieldName(g), lock)
					}
					end = fset.Position(g.End()).Line
					if g.Comment != nil {
						end = max(end, fset.Position(g.Comment.End()).Line)
					}
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal(`no "guards the fields below" found: the test checks nothing`)
	}
}

func fieldName(f *ast.Field) string {
	if len(f.Names) == 0 {
		return "an embedded field"
	}
	return f.Names[0].Name
}

// isSync reports whether typ is one of package sync's or sync/atomic's
// types, which need no lock of their own.
func isSync(typ ast.Expr) bool {
	sel, ok := typ.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "sync" || pkg.Name == "atomic")
}
