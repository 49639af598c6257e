package topology_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// rowsPerNode is how many rows each node inserts while the other does.
const rowsPerNode = 100_000

// Two nodes replicate a table to each other (logical replication, origin =
// none) and both insert into it at once, with DEFAULT ulid_flake_scalable()
// and a SID of their own (ulid_flake_set_sid: docs/deployments.md's recipe): every
// row reaches both, no ID repeats, no apply conflict or error on either.
// A SID lease is refused on both once they subscribe, its table replicated
// with the rest.
func TestMultiWriterScalableDefaults(t *testing.T) {
	t.Parallel()
	for _, major := range pgtest.TopologyVersions(t) {
		t.Run(fmt.Sprintf("pg%d", major), func(t *testing.T) {
			if major < 16 {
				t.Skipf("PostgreSQL %d has no subscription option origin = none (16+): each node would send the other's rows back", major)
			}
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			c := pgtest.NewCluster(t, major)
			nodes := []*pgtest.Node{c.Primary(t, "node1"), c.Primary(t, "node2")}
			pools := make([]*pgxpool.Pool, len(nodes))
			for i, n := range nodes {
				pools[i] = setupNode(t, n, i+1)
			}
			for i, n := range nodes {
				other := nodes[1-i]
				_, err := pools[i].Exec(ctx, fmt.Sprintf(`CREATE SUBSCRIPTION from_%s CONNECTION '%s' PUBLICATION app
					WITH (origin = none, copy_data = false)`, other.Name, other.ConnInfo("app")))
				require.NoError(t, err, n.Name)
			}
			for i := range nodes {
				waitSubscribed(t, pools[i])
				_, err := sidlease.Acquire(ctx, pools[i], "app", sidlease.WithValidity(validity))
				require.ErrorIs(t, err, sidlease.ErrMultiWriter, nodes[i].Name)
			}

			insertOnAll(t, nodes)
			for i, n := range nodes {
				waitRows(t, pools[i], 2*rowsPerNode)
				var rows, distinct, foreign int
				require.NoError(t, pools[i].QueryRow(ctx, `SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id & 31 <> node)
					FROM item`).Scan(&rows, &distinct, &foreign))
				require.Equal(t, 2*rowsPerNode, rows, n.Name)
				require.Equal(t, rows, distinct, "%s: duplicate IDs", n.Name)
				require.Zero(t, foreign, "%s: rows whose SID is not their node's", n.Name)
				require.Empty(t, conflicts(t, pools[i]), "%s: apply conflicts or errors", n.Name)
			}
		})
	}
}

// setupNode creates the database app on n with the SQL functions, its own
// SID, the table and a publication of it, of ulid_flake_nodes (the
// recipe's) and of the lease table (made by a lease taken before the node
// subscribes: allowed then).
func setupNode(t *testing.T, n *pgtest.Node, sid int) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, n.Exec(ctx, `CREATE DATABASE app`))
	conn, err := pgx.Connect(ctx, n.DB("app"))
	require.NoError(t, err)
	require.NoError(t, pgtest.Migrated(ctx, conn))
	_, err = conn.Exec(ctx, `SELECT ulid_flake_set_sid($1)`, sid)
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))
	pool := newPool(t, n.DB("app"))
	lease, err := sidlease.Acquire(ctx, pool, "app", sidlease.WithValidity(validity))
	require.NoError(t, err, "%s, before it subscribes", n.Name)
	require.NoError(t, lease.Close())
	_, err = pool.Exec(ctx, `CREATE TABLE item (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable(), node int NOT NULL);
		CREATE PUBLICATION app FOR TABLE item, ulid_flake_nodes, ulid_flake_sid_leases`)
	require.NoError(t, err)
	return pool
}

// waitSubscribed waits until the node's subscription has an apply worker.
func waitSubscribed(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	require.Eventually(t, func() bool {
		var ready bool
		err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_subscription WHERE pid IS NOT NULL)
			AND NOT EXISTS (SELECT 1 FROM pg_subscription_rel WHERE srsubstate <> 'r')`).Scan(&ready)
		return err == nil && ready
	}, 2*time.Minute, 100*time.Millisecond, "the subscription did not start")
}

// insertOnAll inserts rowsPerNode rows on every node at once, from 4
// sessions per node, each inserting batches of 1,000 with the default ID.
func insertOnAll(t *testing.T, nodes []*pgtest.Node) {
	t.Helper()
	const sessions, batch = 4, 1000
	errs := make(chan error, len(nodes)*sessions)
	start := make(chan struct{})
	for i, n := range nodes {
		for range sessions {
			go func() {
				conn, err := pgx.Connect(context.Background(), n.DB("app"))
				if err != nil {
					errs <- err
					return
				}
				defer conn.Close(context.Background())
				<-start
				for range rowsPerNode / sessions / batch {
					if _, err := conn.Exec(context.Background(), `INSERT INTO item (node) SELECT $1 FROM generate_series(1, $2)`, i+1, batch); err != nil {
						errs <- fmt.Errorf("%s: %w", n.Name, err)
						return
					}
				}
				errs <- nil
			}()
		}
	}
	close(start)
	for range len(nodes) * sessions {
		require.NoError(t, <-errs)
	}
}

// waitRows waits until the node's table has n rows, failing early when
// the apply worker reports conflicts or errors.
func waitRows(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		var rows int
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM item`).Scan(&rows))
		if rows == n {
			return
		}
		require.Empty(t, conflicts(t, pool), "apply conflicts or errors with %d of %d rows", rows, n)
		require.True(t, time.Now().Before(deadline), "%d of %d rows replicated", rows, n)
		time.Sleep(200 * time.Millisecond)
	}
}

// conflicts returns the node's non-zero apply error and conflict counters
// (pg_stat_subscription_stats: apply_error_count and sync_error_count
// since 15, the confl_* counters since 18), but delete_missing: a node
// writes its row of ulid_flake_nodes as DELETE then INSERT, so that a peer
// that subscribed after the row was written gets it; that peer skips the
// DELETE and counts it. The tests delete no row of their own tables.
func conflicts(t *testing.T, pool *pgxpool.Pool) map[string]int64 {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT to_jsonb(s) FROM pg_stat_subscription_stats s`)
	require.NoError(t, err)
	stats, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	require.NoError(t, err)
	require.NotEmpty(t, stats, "no subscription")
	bad := map[string]int64{}
	for _, s := range stats {
		var m map[string]any
		require.NoError(t, json.Unmarshal(s, &m))
		for k, v := range m {
			if n, ok := v.(float64); ok && n != 0 && k != "confl_delete_missing" && (strings.HasPrefix(k, "confl_") || strings.HasSuffix(k, "error_count")) {
				bad[k] += int64(n)
			}
		}
	}
	return bad
}
