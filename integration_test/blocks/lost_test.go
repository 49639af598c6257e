package blocks_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestLostBlocksNeverReused: blocks whose instance is gone are never
// made again: one whose session was terminated after the block came
// back (a crashed instance), one reserved in a transaction rolled back,
// and the rest of a closed Source's block. The IDs that instances and
// DEFAULT make afterwards repeat none of them.
func TestLostBlocksNeverReused(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		sdb := itest.StdDB(t, db)
		_, err := sdb.ExecContext(ctx, itemsTable)
		require.NoError(t, err)
		lost := map[int64]bool{}
		keep := func(ids []int64) {
			require.Len(t, ids, 4096)
			for _, id := range ids {
				lost[id] = true
			}
		}

		crashed, err := pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		var ids []int64
		require.NoError(t, crashed.QueryRow(ctx, `SELECT public.ulid_flake_block(4096)`).Scan(&ids))
		keep(ids)
		_, err = db.Exec(ctx, `SELECT pg_catalog.pg_terminate_backend($1)`, crashed.PgConn().PID())
		require.NoError(t, err)

		tx, err := db.Begin(ctx)
		require.NoError(t, err)
		require.NoError(t, tx.QueryRow(ctx, `SELECT public.ulid_flake_block(4096)`).Scan(&ids))
		keep(ids)
		require.NoError(t, tx.Rollback(ctx))

		src, err := blocks.NewSource(sdb, blocks.WithSize(4096))
		require.NoError(t, err)
		first, err := src.New()
		require.NoError(t, err)
		require.NoError(t, src.Close())

		all := runWriters(t, ctx, db.URL, 16, 2000, blocks.WithSize(64))
		requireWritten(t, ctx, sdb, all, 16*3*2000/100)
		rows, err := db.Query(ctx, `SELECT id FROM items`)
		require.NoError(t, err)
		made, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err)
		require.NotContains(t, made, first.Int64(), "the closed Source's first ID")
		for _, id := range made {
			require.Falsef(t, lost[id], "ID %s of a lost block made again", flake.ID(id))
		}
		require.Greater(t, slices.Min(made), int64(0))
	})
}
