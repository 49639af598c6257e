package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A run with a failing subtest beside a race report, a skip, and a package
// that timed out with no failing test: each failure's output, and the
// package's own (the race), is printed under its package, the
// timed-out package counts as a failure, and the version's row counts the
// subtest; a package from go test's cache is marked.
func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"output","Package":"x/a","Test":"TestA/pg18","Output":"    a_test.go:3: boom\n"}`,
		`{"Action":"fail","Package":"x/a","Test":"TestA/pg18","Elapsed":1.5}`,
		`{"Action":"fail","Package":"x/a","Test":"TestA","Elapsed":1.5}`,
		`{"Action":"output","Package":"x/a","Test":"TestOK/pg18","Output":"    ok_test.go:1: chatter\n"}`,
		`{"Action":"pass","Package":"x/a","Test":"TestOK/pg18","Elapsed":0.5}`,
		`{"Action":"pass","Package":"x/a","Test":"TestOK","Elapsed":0.5}`,
		`{"Action":"output","Package":"x/a","Output":"WARNING: DATA RACE\n"}`,
		`{"Action":"fail","Package":"x/a","Elapsed":2}`,
		`{"Action":"output","Package":"x/b","Test":"TestB","Output":"    b_test.go:9: heavy scenario: later\n"}`,
		`{"Action":"skip","Package":"x/b","Test":"TestB","Elapsed":0}`,
		`{"Action":"pass","Package":"x/b","Elapsed":0.1}`,
		`{"Action":"output","Package":"x/c","Output":"panic: test timed out after 10m0s\n"}`,
		`{"Action":"pass","Package":"x/d","Test":"TestD/pg18","Elapsed":3}`,
		`{"Action":"output","Package":"x/d","Output":"ok  \tx/d\t(cached)\n"}`,
		`{"Action":"pass","Package":"x/d","Elapsed":0}`,
		`{"Action":"fail","Package":"x/c","Elapsed":600}`,
	}, "\n")
	pkgs, err := read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	failures(&out, pkgs)
	totals := report(&out, pkgs, time.Second)
	if totals != (tally{pass: 3, fail: 3, skip: 1}) {
		t.Errorf("totals %+v, want 3 passed, 3 failed (2 tests and a package), 1 skipped", totals)
	}
	got := out.String()
	for _, want := range []string{
		"== FAIL x/a\n    a_test.go:3: boom\nWARNING: DATA RACE\n",
		"== FAIL x/c\npanic: test timed out after 10m0s\n",
		"pg18       5.0       2       1        0",
		"1  x/b: heavy scenario: later",
		"1 packages (marked *) from go test's cache",
		"x/d *",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "chatter") {
		t.Errorf("a passing test's output is printed:\n%s", got)
	}
}
