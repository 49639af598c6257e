package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulidflake/ulidflake/migrations"
)

// readTree reads every file under dir, by name.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// fsTree reads every file of fsys, by name.
func fsTree(t *testing.T, fsys fs.FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	names, err := fs.Glob(fsys, "*")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

// migrations write puts the files the embedded recipes read (FS, GooseFS)
// into a directory, byte for byte; the same files and output each time;
// writing again changes nothing.
func TestMigrationsWrite(t *testing.T) {
	for tool, fsys := range map[string]fs.FS{"golang-migrate": migrations.FS(), "goose": migrations.GooseFS()} {
		t.Run(tool, func(t *testing.T) {
			want := fsTree(t, fsys)
			if len(want) == 0 {
				t.Fatal("no files to compare with")
			}
			dir1 := filepath.Join(t.TempDir(), "db", "ulidflake") // created, parents too
			dir2 := t.TempDir()
			code, out1, errOut := runCLI("", "migrations", "write", "-tool", tool, "-dir", dir1)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := readTree(t, dir1); !equalTrees(got, want) {
				t.Fatalf("%s files differ from the embedded ones: %v", tool, keys(got))
			}
			code, out2, errOut := runCLI("", "migrations", "write", "-dir", dir2, "-tool", tool)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !equalTrees(readTree(t, dir1), readTree(t, dir2)) {
				t.Fatal("two writes differ")
			}
			if strings.ReplaceAll(out1, dir1, "D") != strings.ReplaceAll(out2, dir2, "D") || strings.Count(out1, "wrote ") != len(want) {
				t.Fatalf("outputs differ or miss files:\n%s\n%s", out1, out2)
			}
			code, again, errOut := runCLI("", "migrations", "write", "-tool", tool, "-dir", dir1)
			if code != 0 || strings.Contains(again, "wrote ") || strings.Count(again, "unchanged ") != len(want) {
				t.Fatalf("again: exit %d: %s%s", code, again, errOut)
			}
			if !equalTrees(readTree(t, dir1), want) {
				t.Fatal("writing again changed the files")
			}
		})
	}
}

// A directory that holds other migrations, or one of ulidflake's files
// changed, is refused (exit 1), and nothing is written.
func TestMigrationsWriteRefuses(t *testing.T) {
	t.Run("other migrations", func(t *testing.T) {
		dir := t.TempDir()
		app := filepath.Join(dir, "1_users.up.sql")
		if err := os.WriteFile(app, []byte("CREATE TABLE users ();"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := runCLI("", "migrations", "write", "-tool", "golang-migrate", "-dir", dir)
		if code != 1 || !strings.Contains(errOut, "1_users.up.sql") || !strings.Contains(errOut, "directory of their own") {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if got := readTree(t, dir); len(got) != 1 {
			t.Fatalf("wrote files: %v", keys(got))
		}
	})
	t.Run("a file changed", func(t *testing.T) {
		dir := t.TempDir()
		if code, _, errOut := runCLI("", "migrations", "write", "-tool", "goose", "-dir", dir); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		name := filepath.Join(dir, "001_ulid_flake.sql")
		if err := os.WriteFile(name, []byte("-- edited\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(dir, "002_ulid_flake_id.sql")
		if err := os.Remove(other); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := runCLI("", "migrations", "write", "-tool", "goose", "-dir", dir)
		if code != 1 || !strings.Contains(errOut, "001_ulid_flake.sql") {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if b, _ := os.ReadFile(name); string(b) != "-- edited\n" {
			t.Fatal("overwrote the changed file")
		}
		if _, err := os.Stat(other); err == nil {
			t.Fatal("wrote a file before refusing")
		}
	})
	t.Run("golang-migrate files in a goose directory", func(t *testing.T) {
		dir := t.TempDir()
		if code, _, errOut := runCLI("", "migrations", "write", "-tool", "goose", "-dir", dir); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if code, _, errOut := runCLI("", "migrations", "write", "-tool", "golang-migrate", "-dir", dir); code != 1 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	})
}

func TestMigrationsWriteBadFlagsExitTwo(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"migrations", "write"},
		{"migrations", "write", "-tool", "goose"},
		{"migrations", "write", "-dir", dir},
		{"migrations", "write", "-tool", "flyway", "-dir", dir},
		{"migrations", "write", "-tool", "", "-dir", dir},
		{"migrations", "write", "-tool", "goose", "-dir", ""},
		{"migrations", "write", "-tool", "goose", "-dir", dir, "extra"},
		{"migrations", "write", "-tool", "goose", "-dir", dir, "-bogus"},
		{"migrations", "up", "extra"},
		{"migrations", "-tool", "goose"},
	} {
		code, out, errOut := runCLI("", args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "usage") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if got := readTree(t, dir); len(got) != 0 {
		t.Fatalf("bad flags wrote files: %v", keys(got))
	}
	var out bytes.Buffer
	helpOut = &out
	defer func() { helpOut = os.Stdout }()
	if code := run([]string{"migrations", "write", "-h"}, strings.NewReader(""), &out, &out); code != 0 ||
		!strings.Contains(out.String(), "-tool") || !strings.Contains(out.String(), "-dir") {
		t.Fatalf("write -h: exit %d:\n%s", code, out.String())
	}
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
