package docscheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// goBlock is a ```go block of a Markdown file.
type goBlock struct {
	file string // relative to the root
	line int    // of the fence
	src  string
	// given is the Go of the <!-- docscheck ... --> comment just above
	// the fence: the variables the fragment takes as given, and
	// optionally a line "returns (T, error)" for its function's results.
	given   string
	returns string
}

// knownImports are the package names a fragment may use without
// importing them, and their paths.
var knownImports = map[string]string{
	"context": "context", "errors": "errors", "fmt": "fmt", "io": "io", "os": "os", "time": "time",
	"json": "encoding/json", "http": "net/http", "slog": "log/slog", "testing": "testing",
	"otel":           "go.opentelemetry.io/otel",
	"sdklog":         "go.opentelemetry.io/otel/sdk/log",
	"sdktrace":       "go.opentelemetry.io/otel/sdk/trace",
	"tracetest":      "go.opentelemetry.io/otel/sdk/trace/tracetest",
	"otelslog":       "go.opentelemetry.io/contrib/bridges/otelslog",
	"otelhttp":       "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp",
	"progress":       "github.com/progressotel/progressotel/progress",
	"progresstest":   "github.com/progressotel/progressotel/progress/progresstest",
	"wire":           "github.com/progressotel/progressotel/progress/wire",
	"otelbridge":     "github.com/progressotel/progressotel/otelbridge",
	"sdkparts":       "github.com/progressotel/progressotel/otelbridge/sdkparts",
	"prettyexporter": "github.com/progressotel/progressotel/prettyexporter",
	"propagation":    "github.com/progressotel/progressotel/propagation",
	"adapter":        "github.com/progressotel/progressotel/adapter",
	"ansible":        "github.com/progressotel/progressotel/ansible",
	"terraform":      "github.com/progressotel/progressotel/terraform",
	// The kube module's.
	"kube":    "github.com/progressotel/progressotel/kube",
	"ctrl":    "sigs.k8s.io/controller-runtime",
	"client":  "sigs.k8s.io/controller-runtime/pkg/client",
	"meta":    "k8s.io/apimachinery/pkg/api/meta",
	"metav1":  "k8s.io/apimachinery/pkg/apis/meta/v1",
	"rest":    "k8s.io/client-go/rest",
	"runtime": "k8s.io/apimachinery/pkg/runtime",
	// The collector's end-to-end module's.
	"kgo": "github.com/twmb/franz-go/pkg/kgo",
}

// moduleOf is the module whose dependencies a package name needs; the
// root module's otherwise.
var moduleOf = map[string]string{
	"kube": "kube", "ctrl": "kube", "client": "kube", "meta": "kube", "metav1": "kube", "rest": "kube", "runtime": "kube",
	"kgo": "collector-config/e2e",
}

var selector = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.[A-Za-z]`)

// TestDocsGoBlocksCompile type-checks every Go block of README.md and
// docs/*.md against the packages of this checkout: a whole program as it
// is, a fragment as the body of a function taking ctx, with the variables
// its <!-- docscheck --> comment gives and the known package names
// imported. Unused variables and imports are allowed (a fragment shows a
// call, not what follows it); any other error fails.
func TestDocsGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the packages' export data")
	}
	root := testutil.RepoRoot(t)
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	var blocks []goBlock
	for _, d := range docs {
		blocks = append(blocks, goBlocks(t, root, d)...)
	}
	if len(blocks) < 15 {
		t.Fatalf("found %d Go blocks: the reader is wrong", len(blocks))
	}
	type unit struct {
		b     goBlock
		src   string
		paths []string
	}
	byModule := map[string][]unit{}
	for _, b := range blocks {
		src, names := wrap(b)
		module := "."
		var paths []string
		for _, n := range names {
			paths = append(paths, knownImports[n])
			if m, ok := moduleOf[n]; ok {
				module = m
			}
		}
		if strings.HasPrefix(strings.TrimSpace(b.src), "package ") {
			paths = importsOf(t, b)
		}
		byModule[module] = append(byModule[module], unit{b, src, paths})
	}
	for _, module := range slices.Sorted(maps.Keys(byModule)) {
		units := byModule[module]
		var all []string
		for _, u := range units {
			all = append(all, u.paths...)
		}
		exports := exportData(t, filepath.Join(root, module), all)
		for _, u := range units {
			if err := typeCheck(u.src, exports); err != nil {
				t.Errorf("%s:%d: the Go block does not compile (module %s):\n%v\n--- as checked:\n%s", u.b.file, u.b.line, module, err, u.src)
			}
		}
	}
}

// goBlocks reads the ```go blocks of a Markdown file, each with the
// docscheck comment just above its fence.
func goBlocks(t *testing.T, root, path string) []goBlock {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rel, _ := filepath.Rel(root, path)
	var blocks []goBlock
	var cur *goBlock
	var comment []string // the docscheck comment being read, or just read
	inComment, commentEnd := false, 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && strings.HasPrefix(strings.TrimSpace(line), "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.src += line + "\n"
		case inComment:
			if strings.TrimSpace(line) == "-->" {
				inComment, commentEnd = false, n
			} else {
				comment = append(comment, line)
			}
		case strings.TrimSpace(line) == "<!-- docscheck":
			inComment, comment = true, nil
		case strings.TrimSpace(line) == "```go":
			cur = &goBlock{file: rel, line: n}
			if commentEnd == n-1 {
				for _, c := range comment {
					if r, ok := strings.CutPrefix(strings.TrimSpace(c), "returns "); ok {
						cur.returns = r
					} else {
						cur.given += c + "\n"
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// wrap returns the source to check for b and the known package names it
// uses.
func wrap(b goBlock) (string, []string) {
	if strings.HasPrefix(strings.TrimSpace(b.src), "package ") {
		return b.src, nil
	}
	used := map[string]bool{"context": true}
	for _, m := range selector.FindAllStringSubmatch(b.given+b.src, -1) {
		if _, ok := knownImports[m[1]]; ok {
			used[m[1]] = true
		}
	}
	names := slices.Sorted(maps.Keys(used))
	var s strings.Builder
	s.WriteString("package docblock\n\nimport (\n")
	for _, n := range names {
		fmt.Fprintf(&s, "\t%s %q\n", n, knownImports[n])
	}
	returns := b.returns
	if returns == "" {
		returns = "error"
	}
	fmt.Fprintf(&s, ")\n\nfunc _(ctx context.Context) %s {\n%s{\n%s}\npanic(0)\n}\n", returns, b.given, b.src)
	return s.String(), names
}

func importsOf(t *testing.T, b goBlock) []string {
	f, err := parser.ParseFile(token.NewFileSet(), b.file, b.src, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("%s:%d: %v", b.file, b.line, err)
	}
	var paths []string
	for _, s := range f.Imports {
		p, _ := strconv.Unquote(s.Path.Value)
		paths = append(paths, p)
	}
	return paths
}

// exportData builds the packages (and their dependencies) in module dir
// and returns their export data files by import path.
func exportData(t *testing.T, dir string, paths []string) map[string]string {
	slices.Sort(paths)
	paths = slices.Compact(paths)
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, paths...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stderr = &strings.Builder{}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export in %s: %v\n%s", dir, err, cmd.Stderr)
	}
	m := map[string]string{}
	for line := range strings.Lines(string(out)) {
		if p, f, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok && f != "" {
			m[p] = f
		}
	}
	return m
}

// typeCheck type-checks one file against the export data; soft errors
// (unused variables and imports) are allowed.
func typeCheck(src string, exports map[string]string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "block.go", src, 0)
	if err != nil {
		return err
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	var errs []string
	conf := types.Config{Importer: imp, Error: func(err error) {
		if te, ok := err.(types.Error); ok && te.Soft {
			return
		}
		errs = append(errs, err.Error())
	}}
	_, _ = conf.Check("docblock", fset, []*ast.File{f}, nil)
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}
