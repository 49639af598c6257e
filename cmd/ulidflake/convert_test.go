package main

import (
	"strings"
	"testing"
)

// A database that cannot be reached is a failure of the machine, not of
// the input: exit status 1, with the driver's error.
func TestConvertUnreachableExitsOne(t *testing.T) {
	code, _, errOut := runCLI("", "convert", "-database-url", "postgres://x@127.0.0.1:1/x?connect_timeout=5", "-table", "t")
	if code != 1 || strings.Contains(errOut, "cannot convert") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// Bad flags are bad input: exit status 2.
func TestConvertBadFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"convert", "-database-url", "postgres://x@127.0.0.1:1/x", "-table", "t", "extra"},
		{"convert", "-database-url", "postgres://x@127.0.0.1:1/x", "-table", "t", "-lock-timeout", "soon"},
	} {
		if code, _, errOut := runCLI("", args...); code != 2 {
			t.Errorf("%q: exit %d: %s", args, code, errOut)
		}
	}
}
