package jetgen

import (
	"bytes"
	"context"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

var update = flag.Bool("update", false, "rewrite ../gen with the generated code")

// TestMain sets the template database up as jetexample.Setup does (which
// this package cannot import: it needs the generated code).
func TestMain(m *testing.M) {
	pgtest.Main(m, func(ctx context.Context, conn *pgx.Conn) error {
		schema, err := os.ReadFile("../schema.sql")
		if err != nil {
			return err
		}
		db := stdlib.OpenDB(*conn.Config())
		defer db.Close()
		if _, err := migrations.Migrate(ctx, db); err != nil {
			return err
		}
		_, err = db.ExecContext(ctx, string(schema))
		return err
	})
}

// files reads every file under dir, by path relative to dir.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGenerated generates the code from the schema on each server and
// compares it with ../gen; with -update it rewrites ../gen instead.
func TestGenerated(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		sdb := stdlib.OpenDBFromPool(db.Pool)
		defer sdb.Close()
		dir := t.TempDir()
		if err := Generate(sdb, "public", dir); err != nil {
			t.Fatal(err)
		}
		got := files(t, dir)
		if len(got) == 0 {
			t.Fatal("jet generated nothing")
		}
		if *update {
			if err := os.RemoveAll("../gen"); err != nil {
				t.Fatal(err)
			}
			if err := os.CopyFS("../gen", os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
		}
		want := files(t, "../gen")
		for name, b := range got {
			if !bytes.Equal(b, want[name]) {
				t.Errorf("../gen/%s is not what jet generates: run .ci/examples.sh's jet step (go test ./jetgen -args -update)", name)
			}
		}
		for name := range want {
			if _, ok := got[name]; !ok {
				t.Errorf("../gen/%s: jet no longer generates it: run go test ./jetgen -args -update", name)
			}
		}
	})
}
