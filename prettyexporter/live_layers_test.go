package prettyexporter

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// The live view's model and its renderer, file by file. The model is fed by the processors and
// knows no terminal; the renderer draws from what the model hands over.
var (
	liveModelFiles    = []string{"live_model.go", "live_events.go", "live_spans.go", "live_notes.go"}
	liveRendererFiles = []string{"live_render.go", "live_frame.go", "live_row.go", "live_plain.go", "live_terminal.go"}
)

// TestLiveModelKnowsNoRenderer: no name declared in a renderer's file is used in a model's file, so
// the file graph has no arrow from the model back up to its drawing, and the model has no field
// about drawing (a width, a printer, a row, a frame).
func TestLiveModelKnowsNoRenderer(t *testing.T) {
	fset := token.NewFileSet()
	declared := map[string]string{} // top-level name → its renderer file
	for _, f := range liveRendererFiles {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					declared[d.Name.Name] = f
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						declared[s.Name.Name] = f
					case *ast.ValueSpec:
						for _, n := range s.Names {
							declared[n.Name] = f
						}
					}
				}
			}
		}
	}
	if len(declared) < 20 {
		t.Fatalf("only %d names in the renderer's files: %v", len(declared), declared)
	}
	for _, f := range liveModelFiles {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if from, ok := declared[id.Name]; ok {
					t.Errorf("%s: %s uses %s, declared by the renderer in %s", fset.Position(id.Pos()), f, id.Name, from)
				}
			}
			return true
		})
	}
	// The model's own types hold nothing of the renderer's.
	for _, name := range []string{"liveModel", "liveTree", "liveHead", "liveNode"} {
		if from, ok := declared[name]; ok || slices.Contains(liveRendererFiles, from) {
			t.Errorf("%s is declared in %s", name, from)
		}
	}
}
