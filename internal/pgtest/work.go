package pgtest

import (
	"flag"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// hasWork reports whether the test binary will run a test, a benchmark or
// a fuzz target that its flags select, so that one with nothing to run (a
// package of benchmarks under a plain go test, or a -run that selects
// none of its tests) builds no image and starts no server. It reads the
// lists testing.M keeps; when it cannot, it says yes.
func hasWork(m *testing.M) bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	v := reflect.ValueOf(m).Elem()
	tests, benches, fuzz := v.FieldByName("tests"), v.FieldByName("benchmarks"), v.FieldByName("fuzzTargets")
	if !tests.IsValid() || !benches.IsValid() || !fuzz.IsValid() {
		return true
	}
	if flagValue("test.fuzz") != "" && fuzz.Len() > 0 {
		return true
	}
	if flagValue("test.bench") != "" && benches.Len() > 0 {
		return true
	}
	run := flagValue("test.run")
	first, _, _ := strings.Cut(run, "/")
	re, err := regexp.Compile(first)
	if err != nil {
		return true
	}
	for i := range tests.Len() {
		if re.MatchString(tests.Index(i).FieldByName("Name").String()) {
			return true
		}
	}
	return false
}

func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}
