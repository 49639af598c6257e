package ulidflake_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

// TestDocsNameRealTests: every test, example, fuzz target or benchmark
// that the docs (the guarantees ledger above all) name exists, so a
// promise cannot point at a test that was renamed or removed.
func TestDocsNameRealTests(t *testing.T) {
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?((?:Test|Example|Fuzz|Benchmark)\w+)\(`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			defined[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob("docs/*.md")
	docs = append(docs, "README.md", "CONTRIBUTING.md", "BENCHMARKS.md")
	named := regexp.MustCompile(`\b((?:Test|Example|Fuzz|Benchmark)[A-Z]\w*)`)
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(b), -1) {
			if name := m[1]; !defined[name] && !defined[strings.TrimSuffix(name, "s")] {
				t.Errorf("%s names %s, which no _test.go file defines", doc, name)
			}
		}
	}
	if len(defined) < 100 {
		t.Fatalf("found only %d tests: walked the wrong tree?", len(defined))
	}
}

// TestAliasDocsListEveryMethod: go doc and pkg.go.dev show no methods for
// an alias, so the doc of each alias type of this package links every
// method its type declares, and nothing else; an alias of a type that
// embeds ID says so, and links [ID], whose doc lists the methods it
// promotes. It fails when a method is added to (or removed from) a type
// without the list here changing. The methods are read from the source of
// flake and sqltype, so that those of every build (json/v2 included)
// count, and checked against this build's method sets.
func TestAliasDocsListEveryMethod(t *testing.T) {
	idMethods := reflect.TypeFor[*flake.ID]()
	for _, a := range []struct {
		name, pkg string
		typ       reflect.Type
	}{
		{"ID", "flake", reflect.TypeFor[*flake.ID]()},
		{"Epoch", "flake", reflect.TypeFor[*flake.Epoch]()},
		{"Generator", "flake", reflect.TypeFor[*flake.Generator]()},
		{"TrustedID", "flake", reflect.TypeFor[*flake.TrustedID]()},
		{"NullID", "sqltype", reflect.TypeFor[*sqltype.NullID]()},
		{"TextID", "sqltype", reflect.TypeFor[*sqltype.TextID]()},
		{"Bound", "sqltype", reflect.TypeFor[*sqltype.Bound]()},
	} {
		doc, ok := aliasDocs(t)[a.name]
		if !ok {
			t.Fatalf("ulidflake.go declares no alias %s", a.name)
		}
		source := declaredMethods(t, a.pkg)[a.name]
		listed := map[string]bool{}
		link := regexp.MustCompile(`\[` + a.pkg + `\.` + a.name + `\.(\w+)\]`)
		for _, m := range link.FindAllStringSubmatch(doc, -1) {
			listed[m[1]] = true
		}
		for m := range source {
			if !listed[m] {
				t.Errorf("the doc of ulidflake.%s does not list %s.%s.%s", a.name, a.pkg, a.name, m)
			}
		}
		for m := range listed {
			if !source[m] {
				t.Errorf("the doc of ulidflake.%s lists %s.%s.%s, which %s does not declare", a.name, a.pkg, a.name, m, a.pkg)
			}
		}
		embedsID := false
		if st := a.typ.Elem(); st.Kind() == reflect.Struct {
			f, found := st.FieldByName("ID")
			embedsID = found && f.Anonymous && f.Type == reflect.TypeFor[flake.ID]()
		}
		if embedsID && !strings.Contains(doc, "embeds [ID]") {
			t.Errorf("the doc of ulidflake.%s does not say that it embeds [ID]", a.name)
		}
		for i := range a.typ.NumMethod() {
			m := a.typ.Method(i).Name
			if _, promoted := idMethods.MethodByName(m); !listed[m] && !(embedsID && promoted && !source[m]) {
				t.Errorf("%s.%s has the method %s in this build; the doc of ulidflake.%s does not list it", a.pkg, a.name, m, a.name)
			}
		}
	}
}

// declaredMethods returns the exported methods of each type declared in
// the source files of the package in dir, whatever their build
// constraints.
func declaredMethods(t *testing.T, dir string) map[string]map[string]bool {
	t.Helper()
	files, err := filepath.Glob(dir + "/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("%s's sources: %v", dir, err)
	}
	out := map[string]map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok {
				if out[id.Name] == nil {
					out[id.Name] = map[string]bool{}
				}
				out[id.Name][fn.Name.Name] = true
			}
		}
	}
	return out
}

// aliasDocs returns the doc comment of each type declared in ulidflake.go.
func aliasDocs(t *testing.T) map[string]string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "ulidflake.go", nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range file.Decls {
		gen, ok := d.(*ast.GenDecl)
		if !ok || gen.Tok != token.TYPE {
			continue
		}
		for _, s := range gen.Specs {
			doc := gen.Doc
			if spec := s.(*ast.TypeSpec); spec.Doc != nil {
				doc = spec.Doc
			}
			out[s.(*ast.TypeSpec).Name.Name] = doc.Text()
		}
	}
	return out
}

// TestDocSnippetsNeedOneImport: users are told that ulidflake is the one
// import most code needs, so a Go snippet of the docs that uses package
// ulidflake names neither flake nor sqltype, and every ulidflake.Name the
// docs write is declared by this package.
func TestDocSnippetsNeedOneImport(t *testing.T) {
	declared := rootNames(t)
	docs, _ := filepath.Glob("docs/*.md")
	docs = append(docs, "README.md")
	fence := regexp.MustCompile("(?ms)^[ \t]*```go\n(.*?)^[ \t]*```")
	other := regexp.MustCompile(`(?:^|[^\w./])((?:flake|sqltype)\.[A-Z]\w*)`)
	root := regexp.MustCompile(`\bulidflake\.([A-Z]\w*)`)
	snippets := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fence.FindAllStringSubmatch(string(b), -1) {
			snippets++
			if code := m[1]; root.MatchString(code) {
				for _, o := range other.FindAllStringSubmatch(code, -1) {
					t.Errorf("%s: a snippet that imports ulidflake names %s: use (or add) its ulidflake name", doc, o[1])
				}
			}
		}
		for _, m := range root.FindAllStringSubmatch(string(b), -1) {
			if !declared[m[1]] {
				t.Errorf("%s names ulidflake.%s, which package ulidflake does not declare", doc, m[1])
			}
		}
	}
	if snippets < 10 {
		t.Fatalf("found only %d Go snippets: is the fence pattern wrong?", snippets)
	}
}

// rootNames returns the exported names that ulidflake.go declares.
func rootNames(t *testing.T) map[string]bool {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "ulidflake.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			out[d.Name.Name] = d.Recv == nil && d.Name.IsExported()
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					out[s.Name.Name] = s.Name.IsExported()
				case *ast.ValueSpec:
					for _, n := range s.Names {
						out[n.Name] = n.IsExported()
					}
				}
			}
		}
	}
	return out
}
