// Package migrations installs the SQL side of ulidflake in PostgreSQL:
// ulid_flake() for DEFAULT clauses, its scalable form, encode, decode, time
// and bounds functions, all bit-compatible with package flake. Plain SQL
// and PL/pgSQL: no extension and no superuser, so it installs on managed
// PostgreSQL. What the functions guarantee is in docs/sql.md.
//
// Three ways to install it:
//
//   - [Migrate]: its own version table, each version in its own transaction;
//     safe to run from every instance of the application at start-up and from two releases at
//     once ([ErrAhead]); it adopts an install another tool made, and draws a
//     new offset for the ID functions on a cloned database.
//   - golang-migrate ([FS]) or goose ([GooseFS]), beside the app's own
//     migrations: ulidflake's run from a source of their own, with a
//     version table of their own, before the app's (whose numbering they
//     would clash with in one directory or one table). `ulidflake
//     migrations write` puts the same files in a directory for the tools'
//     command lines. The recipes are in docs/sql.md ("Installing").
//   - The SQL itself: `ulidflake migrations up` prints it, for any other
//     tool (with psql: `psql -v ON_ERROR_STOP=1`).
//
// The functions count from the epoch fixed at install: pass [WithEpoch] when
// the application's generators use another than the default
// ([flake.WithEpoch]). docs/sql.md ("The epoch") says how to change it.
// The SID that ulid_flake_scalable() uses when its call gives none is
// fixed too, by the install's owner (ulid_flake_set_sid; docs/sql.md, "The
// SID").
//
// The install schema is the installer's alone: install as the role that
// owns it, in a schema no other role may create in (best a schema of its
// own: CREATE SCHEMA ulid_flake, then [WithSchema]). Every file from
// version 5 on, and Migrate before every step, refuse another (SQLSTATE
// 55U05, [ErrForeignOwner]).
//
// The objects land in the first schema of search_path that exists; each
// file pins search_path to that schema alone before it creates anything.
// To put them in a schema of their own, create it and pass [WithSchema] (or set
// search_path before running the files). Every body resolves its operators
// and functions in pg_catalog or the install schema, whatever the caller's
// search_path.
//
// Every function takes a *sql.DB, so the package needs no driver of its
// own: with a pgx pool, pass stdlib.OpenDBFromPool(pool) (package
// github.com/jackc/pgx/v5/stdlib).
package migrations

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:embed sql/*.sql
var files embed.FS

// Migration is one version: the SQL to apply it and to revert it.
type Migration struct {
	Version int
	Name    string
	Up      string
	Down    string
}

var fileName = regexp.MustCompile(`^(\d+)_([a-z0-9_]+)\.(up|down)\.sql$`)

// All returns the migrations in version order, after checking that every
// version from 1 on has exactly one up and one down file.
func All() ([]Migration, error) { return load(files, "sql") }

func load(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	byVersion := map[int]*Migration{}
	for _, e := range entries {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migrations: %s is not named NNN_name.up.sql or NNN_name.down.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		mig := byVersion[v]
		if mig == nil {
			mig = &Migration{Version: v, Name: m[2]}
			byVersion[v] = mig
		}
		if mig.Name != m[2] {
			return nil, fmt.Errorf("%w: version %d is both %s and %s", ErrDuplicate, v, mig.Name, m[2])
		}
		target := &mig.Up
		if m[3] == "down" {
			target = &mig.Down
		}
		if *target != "" {
			return nil, fmt.Errorf("%w: version %d has two %s files", ErrDuplicate, v, m[3])
		}
		*target = string(b)
	}
	var all []Migration
	for v := 1; v <= len(byVersion); v++ {
		mig, ok := byVersion[v]
		if !ok {
			return nil, fmt.Errorf("%w: version %d (the versions must run 1, 2, 3, ... without gaps)", ErrMissing, v)
		}
		if mig.Up == "" || mig.Down == "" {
			return nil, fmt.Errorf("%w: version %d has no %s file", ErrMissing, v, map[bool]string{true: "up", false: "down"}[mig.Up == ""])
		}
		all = append(all, *mig)
	}
	if len(all) != len(byVersion) {
		return nil, fmt.Errorf("%w: the versions must run 1, 2, 3, ... without gaps", ErrMissing)
	}
	return all, nil
}

// FS returns the migration files as NNN_name.up.sql and NNN_name.down.sql
// at its root: the layout golang-migrate reads through source/iofs,
// iofs.New(migrations.FS(), "."). Run them with a version table of their
// own (the postgres driver's x-migrations-table, for example
// ulid_flake_schema_migrations), before the app's own migrations: their
// versions 1, 2, 3 ... would clash with the app's in one table.
func FS() fs.FS {
	sub, err := fs.Sub(files, "sql")
	if err != nil {
		panic(err) // the embedded directory exists: a build error otherwise
	}
	return sub
}

// GooseFS returns the same migrations in goose's layout: one NNN_name.sql
// file per version with -- +goose Up and -- +goose Down sections. Run them
// with a goose.Provider of their own, before the app's: its own version
// table (goose.WithTableName, for example ulid_flake_goose_db_version), and
// a session lock (goose.WithSessionLocker) when instances may run it at
// once, as goose's package-level functions take no lock.
func GooseFS() fs.FS {
	all, err := All()
	if err != nil {
		panic(err) // the embedded set is checked by the package's tests
	}
	m := flatFS{}
	for _, mig := range all {
		var b strings.Builder
		fmt.Fprintf(&b, "-- +goose Up\n-- +goose StatementBegin\n%s\n-- +goose StatementEnd\n\n", strings.TrimSpace(mig.Up))
		fmt.Fprintf(&b, "-- +goose Down\n-- +goose StatementBegin\n%s\n-- +goose StatementEnd\n", strings.TrimSpace(mig.Down))
		m[fmt.Sprintf("%03d_%s.sql", mig.Version, mig.Name)] = []byte(b.String())
	}
	return m
}

// flatFS is a read-only fs.FS of files at its root, by name.
type flatFS map[string][]byte

func (f flatFS) Open(name string) (fs.File, error) {
	if name == "." {
		entries, _ := f.ReadDir(".")
		return &flatDir{info: flatInfo{name: ".", dir: true}, entries: entries}, nil
	}
	b, ok := f[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &flatFile{Reader: bytes.NewReader(b), info: flatInfo{name: name, size: int64(len(b))}}, nil
}

func (f flatFS) ReadFile(name string) ([]byte, error) {
	b, ok := f[name]
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return bytes.Clone(b), nil
}

func (f flatFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	var entries []fs.DirEntry
	for n, b := range f {
		entries = append(entries, fs.FileInfoToDirEntry(flatInfo{name: n, size: int64(len(b))}))
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

type flatFile struct {
	*bytes.Reader
	info flatInfo
}

func (f *flatFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *flatFile) Close() error               { return nil }

type flatDir struct {
	info    flatInfo
	entries []fs.DirEntry
}

func (d *flatDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *flatDir) Close() error               { return nil }
func (d *flatDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: ".", Err: fs.ErrInvalid}
}

func (d *flatDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if n <= 0 {
		e := d.entries
		d.entries = nil
		return e, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	e := d.entries[:n]
	d.entries = d.entries[n:]
	return e, nil
}

// flatInfo describes a file of a flatFS, or its root.
type flatInfo struct {
	name string
	size int64
	dir  bool
}

func (i flatInfo) Name() string       { return i.name }
func (i flatInfo) Size() int64        { return i.size }
func (i flatInfo) ModTime() time.Time { return time.Time{} }
func (i flatInfo) IsDir() bool        { return i.dir }
func (i flatInfo) Sys() any           { return nil }
func (i flatInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

// Latest returns the highest version.
func Latest() int {
	all, err := All()
	if err != nil || len(all) == 0 {
		return 0
	}
	return all[len(all)-1].Version
}
