package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ulidflake/ulidflake/migrations"
)

// toolFiles are the migration files in each tool's layout: the same bytes
// as the embedded file systems the Go recipes read.
var toolFiles = map[string]func() fs.FS{
	"golang-migrate": migrations.FS,
	"goose":          migrations.GooseFS,
}

// cmdMigrationsWrite writes the migrations as files for golang-migrate or
// goose into a directory of their own (they keep a version table of their
// own: docs/sql.md, "Installing"). Files already there with the same bytes
// are left alone; any other .sql file in the directory, or one of ours
// with other bytes, is refused before anything is written.
func cmdMigrationsWrite(args []string, stdout io.Writer) error {
	fset := newFlagSet("migrations write")
	tool := fset.String("tool", "", "golang-migrate or goose")
	dir := fset.String("dir", "", "the directory to write into (created if missing); it must hold no other migrations")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	files, ok := toolFiles[*tool]
	if !ok || *dir == "" || fset.NArg() > 0 {
		return fmt.Errorf("%w: migrations write needs -tool golang-migrate|goose and -dir DIR", errUsage)
	}
	want, err := readFiles(files())
	if err != nil {
		return err
	}
	same, err := checkDir(*dir, want)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	for _, name := range sortedNames(want) {
		path := filepath.Join(*dir, name)
		if same[name] {
			fmt.Fprintf(stdout, "unchanged %s\n", path)
			continue
		}
		if err := os.WriteFile(path, want[name], 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
	}
	return nil
}

// readFiles reads the files at the root of fsys.
func readFiles(fsys fs.FS) (map[string][]byte, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, n := range names {
		if out[n], err = fs.ReadFile(fsys, n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkDir reads the .sql files already in dir (none if it does not
// exist) and reports which of want are there with the same bytes; any
// other .sql file, or one of want with other bytes, is an error.
func checkDir(dir string, want map[string][]byte) (map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	same := map[string]bool{}
	var foreign, changed []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		w, ours := want[e.Name()]
		if !ours {
			foreign = append(foreign, e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(b, w) {
			changed = append(changed, e.Name())
			continue
		}
		same[e.Name()] = true
	}
	if len(foreign) > 0 {
		return nil, fmt.Errorf("%s holds other migrations (%s): ulidflake's need a directory of their own, "+
			"run with a version table of their own (see docs/sql.md)", dir, strings.Join(foreign, ", "))
	}
	if len(changed) > 0 {
		return nil, fmt.Errorf("%s: %s differ from this build's; nothing written", dir, strings.Join(changed, ", "))
	}
	return same, nil
}

func sortedNames(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
