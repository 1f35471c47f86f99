package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoDialectNames is the guard of ARCHITECTURE.md's "dialects are data to the engine": the
// engine's own code (not its tests) asks a stack's template.DialectPolicy and never names a
// dialect. It fails on a dialect constant of the template package (template.Terraform...), on
// a string literal that spells a dialect's stored name, and on a comparison or switch on a
// Dialect field, except the one lookup of a stored stack's policy (policyOf) and tests of
// whether a dialect was recorded at all (== "").
func TestNoDialectNames(t *testing.T) {
	names, values := dialectConstants(t)
	if len(names) == 0 {
		t.Fatal("found no Dialect constants in internal/template: the guard would check nothing")
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "policyOf" && fn.Recv == nil {
				continue // the one lookup by stored name
			}
			ast.Inspect(d, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "template" && names[n.Sel.Name] {
						t.Errorf("%s: the engine names dialect template.%s: ask the stack's DialectPolicy instead", fset.Position(n.Pos()), n.Sel.Name)
					}
				case *ast.BasicLit:
					if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && values[s] {
						t.Errorf("%s: the engine spells dialect %q: ask the stack's DialectPolicy instead", fset.Position(n.Pos()), s)
					}
				case *ast.BinaryExpr:
					if (n.Op == token.EQL || n.Op == token.NEQ) && (isDialect(n.X) && !isEmpty(n.Y) || isDialect(n.Y) && !isEmpty(n.X)) {
						t.Errorf("%s: the engine compares dialects: ask the stack's DialectPolicy instead", fset.Position(n.Pos()))
					}
				case *ast.SwitchStmt:
					if n.Tag != nil && isDialect(n.Tag) {
						t.Errorf("%s: the engine switches on a dialect: ask the stack's DialectPolicy instead", fset.Position(n.Pos()))
					}
				}
				return true
			})
		}
	}
}

// dialectConstants reads the constants of type Dialect declared in internal/template: their
// names and the names stacks are stored under.
func dialectConstants(t *testing.T) (names, values map[string]bool) {
	t.Helper()
	names, values = map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	pkgs, err := filepath.Glob(filepath.Join("..", "template", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range pkgs {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if typ, ok := vs.Type.(*ast.Ident); !ok || typ.Name != "Dialect" {
					continue
				}
				for i, id := range vs.Names {
					names[id.Name] = true
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
							v, _ := strconv.Unquote(lit.Value)
							values[v] = true
						}
					}
				}
			}
		}
	}
	return names, values
}

// isDialect reports whether e reads a Dialect field (x.Dialect, string(x.Dialect), or a field
// of the request such as r.req.Dialect).
func isDialect(e ast.Expr) bool {
	if c, ok := e.(*ast.CallExpr); ok && len(c.Args) == 1 {
		e = c.Args[0]
	}
	s, ok := e.(*ast.SelectorExpr)
	return ok && s.Sel.Name == "Dialect"
}

func isEmpty(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Kind == token.STRING && (lit.Value == `""` || lit.Value == "``")
}
