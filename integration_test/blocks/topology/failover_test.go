package topology_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// A primary and an asynchronous streaming replica that stops receiving
// WAL. Instances reserve blocks on the primary and the primary makes
// DEFAULT IDs; none of it reaches the replica, whose sequence stays
// behind. The primary is killed and the replica promoted; Migrate runs
// there as at every start (ulid_flake_check_node: one node, a new
// timeline, so it keeps the offset), and instances reserve blocks from
// it. No ID is made twice, and every ID made after the failover is above
// every ID made before: the IDs differ by time, as DB-made IDs do.
func TestFailoverLosesBlockWrites(t *testing.T) {
	t.Parallel()
	for _, major := range pgtest.TopologyVersions(t) {
		t.Run(fmt.Sprintf("pg%d", major), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			c := pgtest.NewCluster(t, major)
			primary := c.Primary(t, "primary")
			replica := c.Replica(t, "replica", primary)
			require.NoError(t, primary.Exec(ctx, `CREATE DATABASE app`))
			old := open(t, ctx, primary.DB("app"))
			_, err := old.ExecContext(ctx, `CREATE TABLE items (id bigint PRIMARY KEY DEFAULT ulid_flake(), n int)`)
			require.NoError(t, err)
			require.NoError(t, pgtest.CaughtUp(ctx, primary, replica))
			require.NoError(t, replica.Detach(ctx))

			before := mint(t, ctx, old)
			require.NoError(t, primary.Kill(ctx))
			require.NoError(t, replica.Promote(ctx))
			after := mint(t, ctx, open(t, ctx, replica.DB("app")))

			require.Less(t, slices.Max(before), slices.Min(after), "IDs made after the failover at or below those made before")
			all := append(slices.Clone(before), after...)
			slices.Sort(all)
			require.Len(t, slices.Compact(all), len(before)+len(after), "duplicate IDs")
		})
	}
}

// open connects to url and runs Migrate, as an instance does at start-up.
func open(t *testing.T, ctx context.Context, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = migrations.Migrate(ctx, db)
	require.NoError(t, err)
	return db
}

// mint has four instances, each with its own Source, make IDs for a
// while on db, and the database make DEFAULT IDs beside them; it returns
// them all.
func mint(t *testing.T, ctx context.Context, db *sql.DB) []flake.ID {
	t.Helper()
	var ids []flake.ID
	for range 4 {
		src, err := blocks.NewSource(db, blocks.WithSize(64))
		require.NoError(t, err)
		defer src.Close()
		for range 2000 {
			id, err := src.NewWait(ctx)
			require.NoError(t, err)
			ids = append(ids, id)
		}
	}
	rows, err := db.QueryContext(ctx, `INSERT INTO items (n) SELECT g FROM pg_catalog.generate_series(1, 2000) AS g RETURNING id`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id flake.ID
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	return ids
}
