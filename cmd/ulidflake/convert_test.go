package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulidflake/ulidflake/migrations/bigserial"
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

// -tool and -dir go together, without -apply or -down: exit status 2.
func TestConvertToolFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"convert", "-database-url", "postgres://x@127.0.0.1:1/x", "-table", "t", "-tool", "goose"},
		{"convert", "-database-url", "postgres://x@127.0.0.1:1/x", "-table", "t", "-dir", "d"},
		{"convert", "-database-url", "postgres://x@127.0.0.1:1/x", "-table", "t", "-tool", "goose", "-dir", "d", "-apply"},
		{"convert", "-database-url", "postgres://x@127.0.0.1:1/x"},
	} {
		if code, _, errOut := runCLI("", args...); code != 2 {
			t.Errorf("%q: exit %d: %s", args, code, errOut)
		}
	}
}

// The files are numbered after the highest version in the directory,
// with as many digits; an empty or missing one starts at 1 as each
// tool's own command does.
func TestNextVersion(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ dir, tool, want string }{
		{filepath.Join(dir, "missing"), "golang-migrate", "000001"},
		{dir, "goose", "00001"},
	} {
		if got, err := nextVersion(tc.dir, tc.tool); err != nil || got != tc.want {
			t.Errorf("%s %s: %q, %v; want %q", tc.dir, tc.tool, got, err, tc.want)
		}
	}
	for _, name := range []string{"000009_a.up.sql", "000010_b.down.sql", "000010_b.up.sql", "README.md", "2_x.sql"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := nextVersion(dir, "golang-migrate"); err != nil || got != "000011" {
		t.Errorf("got %q, %v; want 000011", got, err)
	}
}

// The tables -tables-in skipped are one comment line each, whatever their
// names: a line break or goose's "+goose" stays inside the comment.
func TestSkippedHeader(t *testing.T) {
	got := skippedHeader([]bigserial.Skipped{
		{Table: `"public"."goose_db_version"`, Why: "goose's version table"},
		{Table: "\"public\".\"odd\n+goose Down\"", Why: "goose's version table"},
	}, "-- ")
	want := "-- skipped \"public\".\"goose_db_version\": goose's version table, left alone\n" +
		"-- skipped \"public\".\"odd\\n(+)goose Down\": goose's version table, left alone\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if skippedHeader(nil, "-- ") != "" {
		t.Error("no table skipped: no line")
	}
}

// -version is padded as each tool's own command numbers its files: goose
// create -s writes 00002, migrate create -seq 000002; a longer one stays.
func TestConvertVersionPadded(t *testing.T) {
	for _, tc := range []struct{ tool, version, want string }{
		{"goose", "2", "00002"},
		{"golang-migrate", "2", "000002"},
		{"goose", "0002", "00002"},
		{"goose", "123456", "123456"},
		{"golang-migrate", "20260101120000", "20260101120000"},
	} {
		f, err := parseConvert([]string{"-database-url", "postgres://x@127.0.0.1:1/x", "-table", "t",
			"-tool", tc.tool, "-dir", "d", "-version", tc.version})
		if err != nil || f.version != tc.want {
			t.Errorf("%s -version %s: %q, %v; want %q", tc.tool, tc.version, f.version, err, tc.want)
		}
	}
	code, _, errOut := runCLI("", "convert", "-database-url", "postgres://x@127.0.0.1:1/x", "-table", "t",
		"-tool", "goose", "-dir", "d", "-version", "2a")
	if code != 2 || !strings.Contains(errOut, "want a number") {
		t.Errorf("-version 2a: exit %d: %s", code, errOut)
	}
}

// A -drop or -create file that cannot be read is bad input: exit status 2,
// before the database is reached.
func TestConvertMissingDropFileExitsTwo(t *testing.T) {
	code, _, errOut := runCLI("", "convert", "-database-url", "postgres://x@127.0.0.1:1/x?connect_timeout=5", "-table", "t",
		"-drop", filepath.Join(t.TempDir(), "missing.sql"))
	if code != 2 || !strings.Contains(errOut, "missing.sql") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
