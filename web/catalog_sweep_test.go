package web

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCatalogCoversEngineWords reads the engine's and the server's source
// for the words they write into the data the console shows — event kinds,
// reasons (the waiting room controller's too), outcomes, discrepancy kinds,
// audit actions, reconcile checks and repairs, and every key of an event's
// or an audit entry's detail — and checks the catalog has each in both
// languages. A new constant or detail key without its translation fails
// here instead of showing up in English on a Chinese page.
func TestCatalogCoversEngineWords(t *testing.T) {
	// Constant name prefix → catalog prefix, per package directory.
	constRules := map[string][][2]string{
		"../core": {{"AuditOutcome", "ev.outcome."}, {"Audit", "audit.action."}, {"Event", "ev.kind."},
			{"Reason", "reason."}, {"Outcome", "ev.outcome."}, {"Attempt", "ev.outcome."}, {"Discrepancy", "disc.kind."}},
		"../core/reconcile": {{"Check", "reconcile.check."}, {"Action", "reconcile.action."}},
		"../core/admission": {{"Audit", "audit.action."}, {"Reason", "queue.reason."}},
		"../core/till":      {{"Audit", "audit.action."}, {"Discrepancy", "disc.kind."}},
	}
	// The state of a discrepancy row, not a kind: never shown as one.
	notKinds := map[string]bool{"DiscrepancyOpen": true, "DiscrepancyResolved": true}
	shown := map[string]bool{}
	for _, f := range detailFields("") {
		shown[f.name] = true
	}
	shown["currency"] = true // what the amounts are in (EventFacts), no fact of its own
	fset := token.NewFileSet()
	consts, keys := 0, 0
	for _, root := range []string{"../core", "../server"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "bench" || d.Name() == "clustertest" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			file, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			dir := filepath.ToSlash(filepath.Dir(path))
			ast.Inspect(file, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.ValueSpec:
					for i, name := range x.Names {
						if i >= len(x.Values) || notKinds[name.Name] {
							continue
						}
						v, ok := stringLit(x.Values[i])
						if !ok {
							continue
						}
						for _, r := range constRules[dir] {
							if strings.HasPrefix(name.Name, r[0]) {
								consts++
								if !Known(r[1] + v) {
									t.Errorf("%s: %s = %q: catalog lacks %q", path, name.Name, v, r[1]+v)
								}
								break
							}
						}
					}
				case *ast.CallExpr:
					// A JSON response is the API's, not a detail.
					if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "JSON" {
						return false
					}
				case *ast.CompositeLit:
					if !isAnyMap(x.Type) {
						return true
					}
					for _, el := range x.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if k, ok := stringLit(kv.Key); ok {
								keys++
								if !shown[k] {
									t.Errorf("%s: detail key %q has no label in detailFields", fset.Position(kv.Pos()), k)
								}
							}
						}
					}
				case *ast.AssignStmt:
					for _, lhs := range x.Lhs {
						ix, ok := lhs.(*ast.IndexExpr)
						if !ok {
							continue
						}
						if id, ok := ix.X.(*ast.Ident); ok && (id.Name == "d" || id.Name == "detail") {
							if k, ok := stringLit(ix.Index); ok {
								keys++
								if !shown[k] {
									t.Errorf("%s: detail key %q has no label in detailFields", fset.Position(ix.Pos()), k)
								}
							}
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if consts < 60 || keys < 60 {
		t.Errorf("found only %d constants and %d detail keys: the source no longer looks as this test expects", consts, keys)
	}
	for _, f := range detailFields("") {
		if !Known(f.label) {
			t.Errorf("detail key %s: catalog lacks its label %q", f.name, f.label)
		}
	}
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// isAnyMap reports whether t is map[string]any (or interface{}).
func isAnyMap(t ast.Expr) bool {
	m, ok := t.(*ast.MapType)
	if !ok {
		return false
	}
	if k, ok := m.Key.(*ast.Ident); !ok || k.Name != "string" {
		return false
	}
	switch v := m.Value.(type) {
	case *ast.Ident:
		return v.Name == "any"
	case *ast.InterfaceType:
		return len(v.Methods.List) == 0
	}
	return false
}
