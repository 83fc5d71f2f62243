// Command funclen reports every function declaration longer than a limit, so `make lint` can hold
// the project's rule that no function runs over 80 lines unless a comment says why.
//
//	funclen [-max 80] [-tests] dir...
//
// Each dir is walked recursively (vendor, testdata and hidden directories are skipped, as are
// generated files). A function's length is counted from its `func` line to its closing brace.
// A function is exempt when its doc comment has a line
//
//	// funclen: <why this function cannot be split sensibly>
//
// with a non-empty reason; the reason is the point, so a bare marker is reported too. Test files are
// skipped unless -tests is given: a test reads as one scenario from setup to assertions, and cutting
// it into helpers by length hides the steps a failure report names.
//
// The exit status is 1 when anything is reported, 2 on a usage or parse error.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// marker introduces the justification comment that exempts a function.
const marker = "funclen:"

// finding is one function over the limit (or with an empty justification).
type finding struct {
	pos    token.Position
	name   string
	lines  int
	reason string
}

func main() {
	max := flag.Int("max", 80, "longest function allowed, in lines")
	tests := flag.Bool("tests", false, "check _test.go files too")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: funclen [-max 80] [-tests] dir...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *max < 1 {
		flag.Usage()
		os.Exit(2)
	}
	c := checker{max: *max, tests: *tests, fset: token.NewFileSet()}
	for _, dir := range flag.Args() {
		if err := c.walk(dir); err != nil {
			fmt.Fprintln(os.Stderr, "funclen:", err)
			os.Exit(2)
		}
	}
	sort.Slice(c.found, func(i, j int) bool { return c.found[i].lines > c.found[j].lines })
	for _, f := range c.found {
		if f.reason != "" {
			fmt.Printf("%s: %s: %s\n", f.pos, f.name, f.reason)
			continue
		}
		fmt.Printf("%d %s %s\n", f.lines, f.name, f.pos)
	}
	if len(c.found) > 0 {
		os.Exit(1)
	}
}

type checker struct {
	max   int
	tests bool
	fset  *token.FileSet
	found []finding
}

func (c *checker) walk(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || (!c.tests && strings.HasSuffix(path, "_test.go")) {
			return nil
		}
		return c.file(path)
	})
}

func (c *checker) file(path string) error {
	f, err := parser.ParseFile(c.fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	if ast.IsGenerated(f) {
		return nil
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start := c.fset.Position(fn.Pos())
		lines := c.fset.Position(fn.End()).Line - start.Line + 1
		if lines <= c.max {
			continue
		}
		justified, bare := justification(fn.Doc)
		switch {
		case justified:
			continue
		case bare:
			c.found = append(c.found, finding{pos: start, name: funcName(fn), lines: lines,
				reason: fmt.Sprintf("%d lines; the %q comment must say why", lines, "// "+marker)})
		default:
			c.found = append(c.found, finding{pos: start, name: funcName(fn), lines: lines})
		}
	}
	return nil
}

// justification looks for the exemption marker in a doc comment: justified when it carries a
// reason, bare when it is there without one.
func justification(doc *ast.CommentGroup) (justified, bare bool) {
	if doc == nil {
		return false, false
	}
	for _, cm := range doc.List {
		text := strings.TrimSpace(strings.TrimPrefix(cm.Text, "//"))
		if !strings.HasPrefix(text, marker) {
			continue
		}
		if strings.TrimSpace(strings.TrimPrefix(text, marker)) != "" {
			return true, false
		}
		bare = true
	}
	return false, bare
}

// funcName names a function as gocyclo does: (Recv).Name or Name.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	return "(" + typeName(fn.Recv.List[0].Type) + ")." + fn.Name.Name
}

func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + typeName(t.X)
	case *ast.IndexExpr:
		return typeName(t.X)
	case *ast.IndexListExpr:
		return typeName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}
