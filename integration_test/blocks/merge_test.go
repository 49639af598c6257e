package blocks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestDatabasesThatMerge: two databases that never replicate (shards,
// say), each with a SID of its own (ulid_flake_set_sid) and the scalable
// default, make IDs at once, by DEFAULT and in blocks; their rows, brought
// into one table later, share no ID, and every ID carries its database's
// SID (docs/deployments.md, "Databases that merge").
func TestDatabasesThatMerge(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		const rows = 20000
		shards := []*pgtest.DB{db, db.Server.NewDB(t)}
		made := make([][]int64, len(shards))
		itest.RunWorkers(t, len(shards), func(w int) error {
			sdb := itest.StdDB(t, shards[w])
			sid := w + 1
			if _, err := sdb.ExecContext(ctx, fmt.Sprintf(`SELECT ulid_flake_set_sid(%d)`, sid)); err != nil {
				return err
			}
			if _, err := sdb.ExecContext(ctx, `CREATE TABLE shard_items (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable())`); err != nil {
				return err
			}
			if _, err := sdb.ExecContext(ctx, `INSERT INTO shard_items SELECT FROM pg_catalog.generate_series(1, $1)`, rows); err != nil {
				return err
			}
			src, err := blocks.NewSource(sdb, blocks.WithValidity(time.Minute))
			if err != nil {
				return err
			}
			defer src.Close()
			ids := make([]int64, rows)
			for i := range ids {
				id, err := src.NewWait(ctx)
				if err != nil {
					return err
				}
				ids[i] = id.Int64()
			}
			if _, err := sdb.ExecContext(ctx, `INSERT INTO shard_items SELECT pg_catalog.unnest($1::bigint[])`, ids); err != nil {
				return err
			}
			r, err := sdb.QueryContext(ctx, `SELECT id FROM shard_items`)
			if err != nil {
				return err
			}
			defer r.Close()
			for r.Next() {
				var id int64
				if err := r.Scan(&id); err != nil {
					return err
				}
				if got := flake.ID(id).SID(); got != sid {
					return fmt.Errorf("ID %s of the database with SID %d has SID %d", flake.ID(id), sid, got)
				}
				made[w] = append(made[w], id)
			}
			return r.Err()
		})
		merged := map[int64]bool{}
		for _, ids := range made {
			require.Len(t, ids, 2*rows)
			for _, id := range ids {
				require.False(t, merged[id], "ID %s in both databases", flake.ID(id))
				merged[id] = true
			}
		}
	})
}
