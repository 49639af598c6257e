package ulidflake_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
