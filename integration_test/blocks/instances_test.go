package blocks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// instances is how many instances write at once.
const instances = 256

// TestInstances: 256 instances, each a goroutine with its own pool and
// Source, write at once, directly and through PgBouncer in transaction
// pooling: every ID handed out is written once, beside rows whose IDs the
// database made by DEFAULT, and the IDs keep the time order the package
// states. Blocks of 16 make many reservations.
func TestInstances(t *testing.T) {
	pgtest.Heavy(t)
	// Not parallel: its 256 instances hold one or two connections each, of
	// the server's 1,000; beside another such test they would run out.
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		for _, path := range []string{"direct", "pgbouncer-transaction"} {
			t.Run(path, func(t *testing.T) {
				db := db.Server.NewDB(t)
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				sdb := itest.StdDB(t, db)
				_, err := sdb.ExecContext(ctx, itemsTable)
				require.NoError(t, err)
				u := db.URL
				if path == "pgbouncer-transaction" {
					u = db.Server.PgBouncer(t, db, "transaction", 4) + "&default_query_exec_mode=exec"
				}
				validity := 200 * time.Millisecond
				all := runWriters(t, ctx, u, instances, 300, blocks.WithSize(16), blocks.WithValidity(validity))
				require.Len(t, all, instances*300)
				requireWritten(t, ctx, sdb, all, instances*3*300/100)
				requireTimeOrder(t, all, validity)
			})
		}
	})
}
