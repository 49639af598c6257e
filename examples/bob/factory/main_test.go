package factory

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stephenafamo/bob"

	bobexample "github.com/ulidflake/ulidflake/examples/bob"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain gives Bob's generated factory tests (*.bob_test.go) the database
// they read from testDB: the example's schema, with the migrations, on the
// harness's first server. Importing the example registers its hooks, so
// the factories insert as the application does.
func TestMain(m *testing.M) {
	pgtest.MainWithDB(m, func(ctx context.Context, conn *pgx.Conn) error {
		db := stdlib.OpenDB(*conn.Config())
		defer db.Close()
		return bobexample.Setup(ctx, db)
	}, func(db *pgtest.DB) {
		testDB = bob.NewDB(stdlib.OpenDBFromPool(db.Pool))
	})
}
