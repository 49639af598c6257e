// Package bobgen regenerates the example's Bob code. bobgen-psql reads a
// live database, so a test sets one up as bobexample.Setup does and runs the
// generator (go tool bobgen-psql, the version go.mod pins) against it, in
// the module's directory, with ../bobgen.yaml:
//
//	go test ./bobgen -args -generate
//
// Without -generate the test is skipped; .ci/examples.sh runs it and fails
// when the committed code differs.
package bobgen

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

var generate = flag.Bool("generate", false, "regenerate the Bob code in ..")

// TestMain sets the template database up as bobexample.Setup does (which
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

func TestGenerate(t *testing.T) {
	if !*generate {
		t.Skip("regenerates the code only with -generate")
	}
	done := false
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		if done { // the first server is enough: the code must not depend on it
			t.Skip("generated on the first server")
		}
		cmd := exec.Command("go", "tool", "bobgen-psql", "-c", "bobgen.yaml")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "PSQL_DSN="+db.URL)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("bobgen-psql: %v\n%s", err, out)
		}
		done = true
	})
}
