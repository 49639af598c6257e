package topology_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// meshRows is how many rows each node inserts once the mesh is sound.
const meshRows = 10_000

// Two nodes of a mesh given one SID (the operator's mistake, made before
// they subscribed, so ulid_flake_set_sid saw no other row): once the first
// one's row has reached the second, the second makes no ID (its next
// insert and block are refused, 55U02, before anyone runs a check) and its
// Migrate is refused (ErrMesh), and ulid_flake_set_sid refuses a SID another node's row
// holds. A table published with DEFAULT ulid_flake() is refused too. Once
// each has a SID of its own, both write and no ID repeats.
func TestMeshRefusesOneSIDTwice(t *testing.T) {
	t.Parallel()
	for _, major := range pgtest.TopologyVersions(t) {
		t.Run(fmt.Sprintf("pg%d", major), func(t *testing.T) {
			if major < 16 {
				t.Skipf("PostgreSQL %d has no subscription option origin = none (16+)", major)
			}
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			c := pgtest.NewCluster(t, major)
			nodes := []*pgtest.Node{c.Primary(t, "node1"), c.Primary(t, "node2")}
			pools := []*pgxpool.Pool{meshNode(t, nodes[0], 1), meshNode(t, nodes[1], 1)}
			subscribeMesh(t, nodes, pools, 0, 1)

			// node1 starts first: its Migrate writes its row, which reaches
			// node2, while node2 inserts (one ID a statement, into a table
			// of its own). The window: what node2 makes with SID 1 from the
			// end of node1's Migrate until it is refused.
			_, err := pools[1].Exec(ctx, `CREATE TABLE side (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable(), node int NOT NULL)`)
			require.NoError(t, err)
			var after atomic.Int64
			var migrated atomic.Bool
			stopped := make(chan error, 1)
			go func() {
				for {
					if _, err := pools[1].Exec(ctx, `INSERT INTO side (node) VALUES (2)`); err != nil {
						stopped <- err
						return
					}
					if migrated.Load() {
						after.Add(1)
					}
				}
			}()
			require.NoError(t, migrateNode(ctx, nodes[0]))
			t0 := time.Now()
			migrated.Store(true)
			err = <-stopped
			window := time.Since(t0)
			node1 := nodeID(t, pools[0])
			var pgErr *pgconn.PgError
			require.True(t, errors.As(err, &pgErr), "%v", err)
			require.Equal(t, "55U02", pgErr.Code, "%v", err)
			require.Contains(t, pgErr.Message, "SID 1 is node "+node1)
			t.Logf("window: node2 made %d IDs with node1's SID in the %v from node1's Migrate to its refusal (one row's replication)", after.Load(), window.Round(time.Millisecond))
			waitNodeRows(t, pools[1], 2)
			// The row's arrival alone (no check, no Migrate on node2) stops
			// node2's next ID, and node1 goes on.
			requireRefused(t, pools[1], `INSERT INTO item (node) VALUES (1)`, node1)
			requireRefused(t, pools[1], `SELECT ulid_flake_block(10)`, node1)
			_, err = pools[0].Exec(ctx, `SELECT ulid_flake_scalable()`)
			require.NoError(t, err)
			err = migrateNode(ctx, nodes[1])
			require.ErrorIs(t, err, migrations.ErrMesh, "node2 shares node1's SID")
			require.ErrorContains(t, err, fmt.Sprintf("SID 1 is node %s", node1))

			requireRefused(t, pools[1], `SELECT ulid_flake_set_sid(1)`, node1)
			_, err = pools[1].Exec(ctx, `SELECT ulid_flake_set_sid(2)`)
			require.NoError(t, err, "a SID of its own")
			require.NoError(t, migrateNode(ctx, nodes[1]))
			waitNodeRows(t, pools[0], 2)
			requireRefused(t, pools[0], `SELECT ulid_flake_set_sid(2)`, nodeID(t, pools[1]))

			// A published table whose default ignores the SID.
			_, err = pools[0].Exec(ctx, `CREATE TABLE legacy (id bigint PRIMARY KEY DEFAULT ulid_flake(), v int);
				ALTER PUBLICATION app ADD TABLE legacy`)
			require.NoError(t, err)
			err = migrateNode(ctx, nodes[0])
			require.ErrorIs(t, err, migrations.ErrMesh, "a published DEFAULT ulid_flake()")
			require.ErrorContains(t, err, "legacy.id take their default from ulid_flake()")
			_, err = pools[0].Exec(ctx, `ALTER TABLE legacy ALTER COLUMN id SET DEFAULT ulid_flake_scalable()`)
			require.NoError(t, err)
			require.NoError(t, migrateNode(ctx, nodes[0]))

			writeMesh(t, nodes, pools, []int{1, 2}, 0)
		})
	}
}

// A pg_basebackup clone of node1, promoted (a new timeline), keeps node1's
// SID and offset: its first ID, Migrate (ErrMesh) and ulid_flake_set_sid
// are refused while node1 and node2 write, until ulid_flake_new_node(3)
// gives it a new identity, a new offset and SID 3 (docs/deployments.md).
// This is a failover whose old primary was not stopped, too: no copy
// takes its source's SID over, so there is nothing to adopt. Then the
// three nodes replicate to each other and write at once, and no ID
// repeats.
func TestMeshRefusesAPromotedClone(t *testing.T) {
	t.Parallel()
	for _, major := range pgtest.TopologyVersions(t) {
		t.Run(fmt.Sprintf("pg%d", major), func(t *testing.T) {
			if major < 16 {
				t.Skipf("PostgreSQL %d has no subscription option origin = none (16+)", major)
			}
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			c, nodes, pools := meshOfTwo(t, ctx, major)
			var clone *pgtest.Node
			withoutNode1sSubscription(t, ctx, pools[0], func() {
				clone = c.Replica(t, "node3", nodes[0])
				require.NoError(t, pgtest.CaughtUp(ctx, nodes[0], clone))
				require.NoError(t, clone.Detach(ctx))
			})
			require.NoError(t, clone.Promote(ctx))
			p3 := newPool(t, clone.DB("app"))
			require.Equal(t, generator(t, pools[0]), generator(t, p3), "the clone has node1's SID and offset")
			for _, stmt := range []string{`ALTER SUBSCRIPTION node1_from_node2 DISABLE`, `ALTER SUBSCRIPTION node1_from_node2 SET (slot_name = NONE)`, `DROP SUBSCRIPTION node1_from_node2`} {
				_, err := p3.Exec(ctx, stmt)
				require.NoError(t, err, stmt)
			}

			// Nobody checks the clone: its first ID checks it, while node1
			// (a failover's old primary that nobody stopped) and node2 write.
			node1 := nodeID(t, pools[0])
			var err error
			whilePeersWrite(t, ctx, pools, func() {
				for _, stmt := range []string{`INSERT INTO item (node) VALUES (1)`, `SELECT ulid_flake_block(10)`, `SELECT ulid_flake_scalable()`,
					`SELECT ulid_flake_check_node()`, `SELECT ulid_flake_set_sid(3)`} {
					requireRefused(t, p3, stmt, node1)
				}
				err = migrateNode(ctx, clone)
			})
			requireRows(t, p3, 2000)
			require.ErrorIs(t, err, migrations.ErrMesh, "a promoted clone of node1")
			require.ErrorContains(t, err, fmt.Sprintf("a copy of node %s (SID 1)", node1))
			require.ErrorContains(t, err, "timeline 1, and is now")
			var pgErr *pgconn.PgError
			require.True(t, errors.As(err, &pgErr))
			require.Contains(t, pgErr.Hint, fmt.Sprintf("ulid_flake_retire_node('%s'::uuid)", node1), "a failover frees the old SID by retiring, not adopting")
			requireRefused(t, p3, `SELECT ulid_flake_new_node(2)`, nodeID(t, pools[1]))

			_, err = p3.Exec(ctx, `SELECT ulid_flake_new_node(3)`)
			require.NoError(t, err)
			require.NoError(t, migrateNode(ctx, clone))
			g1, g3 := generator(t, pools[0]), generator(t, p3)
			require.Equal(t, 3, g3.sid)
			require.NotEqual(t, g1.offset, g3.offset, "the clone's offset is node1's")
			require.NotEqual(t, node1, nodeID(t, p3), "the clone's node identity is node1's")

			// node3 joins the mesh.
			nodes = append(nodes, clone)
			pools = append(pools, p3)
			subscribeMesh(t, nodes, pools, 0, 2)
			subscribeMesh(t, nodes, pools, 1, 2)
			announce(t, nodes, pools)
			writeMesh(t, nodes, pools, []int{1, 2, 3}, 2000)
		})
	}
}

// A pg_basebackup copy of node1 started as a server of its own (no
// standby, no promotion) keeps node1's system, database, timeline, SID
// and offset, but none of the replication slots node2 reads node1's
// changes from. Its first ID checks it: refused (55U01) while node1 and
// node2 go on inserting; ulid_flake_new_node(3) makes it a node of its own.
// (There is no adopt: no copy takes its source's SID over.)
// No ID is made on two nodes.
func TestMeshRefusesACopyStartedOnItsOwn(t *testing.T) {
	t.Parallel()
	for _, major := range pgtest.TopologyVersions(t) {
		t.Run(fmt.Sprintf("pg%d", major), func(t *testing.T) {
			if major < 16 {
				t.Skipf("PostgreSQL %d has no subscription option origin = none (16+)", major)
			}
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			c, nodes, pools := meshOfTwo(t, ctx, major)
			var cp *pgtest.Node
			withoutNode1sSubscription(t, ctx, pools[0], func() { cp = c.Copy(t, "node3", nodes[0]) })
			p3 := newPool(t, cp.DB("app"))
			require.Equal(t, generator(t, pools[0]), generator(t, p3), "the copy has node1's SID and offset")

			// node1 and node2 make IDs (in a table of their own, which the
			// copy has not) while the copy tries to.
			node1 := nodeID(t, pools[0])
			seq := func() (v int64) {
				require.NoError(t, p3.QueryRow(ctx, `SELECT last_value FROM ulid_flake_seq`).Scan(&v))
				return
			}
			before := seq()
			whilePeersWrite(t, ctx, pools, func() {
				for _, stmt := range []string{`INSERT INTO item (node) VALUES (1)`, `SELECT ulid_flake_scalable()`, `SELECT ulid_flake_block(10)`,
					`SELECT ulid_flake_check_node()`, `SELECT ulid_flake_set_sid(3)`} {
					requireRefused(t, p3, stmt, node1)
				}
			})
			requireRows(t, p3, 2000)
			require.Equal(t, before, seq(), "the copy drew no sequence value")
			err := migrateNode(ctx, cp)
			require.ErrorIs(t, err, migrations.ErrMesh, "a copy of node1 started on its own")
			require.ErrorContains(t, err, "without the replication slots its peers read from (node2_from_node1)")

			for _, stmt := range []string{`ALTER SUBSCRIPTION node1_from_node2 DISABLE`, `ALTER SUBSCRIPTION node1_from_node2 SET (slot_name = NONE)`,
				`DROP SUBSCRIPTION node1_from_node2`, `SELECT ulid_flake_new_node(3)`} {
				_, err = p3.Exec(ctx, stmt)
				require.NoError(t, err, stmt)
			}
			nodes = append(nodes, cp)
			pools = append(pools, p3)
			subscribeMesh(t, nodes, pools, 0, 2)
			subscribeMesh(t, nodes, pools, 1, 2)
			announce(t, nodes, pools)
			writeMesh(t, nodes, pools, []int{1, 2, 3}, 2000)
		})
	}
}

// meshOfTwo starts node1 (SID 1) and node2 (SID 2) subscribed to each
// other, each with the other's row, and node1 having made 2,000 rows: its
// sequence is past its start.
func meshOfTwo(t *testing.T, ctx context.Context, major int) (*pgtest.Cluster, []*pgtest.Node, []*pgxpool.Pool) {
	t.Helper()
	c := pgtest.NewCluster(t, major)
	nodes := []*pgtest.Node{c.Primary(t, "node1"), c.Primary(t, "node2")}
	pools := []*pgxpool.Pool{meshNode(t, nodes[0], 1), meshNode(t, nodes[1], 2)}
	subscribeMesh(t, nodes, pools, 0, 1)
	announce(t, nodes, pools)
	_, err := pools[0].Exec(ctx, `INSERT INTO item (node) SELECT 1 FROM generate_series(1, 2000)`)
	require.NoError(t, err)
	return c, nodes, pools
}

// withoutNode1sSubscription runs copy (a base backup of node1) with
// node1's subscription disabled, so that the copy's starts disabled and
// never takes node1's slot on node2.
func withoutNode1sSubscription(t *testing.T, ctx context.Context, node1 *pgxpool.Pool, copy func()) {
	t.Helper()
	_, err := node1.Exec(ctx, `ALTER SUBSCRIPTION node1_from_node2 DISABLE`)
	require.NoError(t, err)
	copy()
	_, err = node1.Exec(ctx, `ALTER SUBSCRIPTION node1_from_node2 ENABLE`)
	require.NoError(t, err)
}

// whilePeersWrite runs try while every pool inserts 2,000 rows into a
// table side of its own (made here, after any copy was taken), 100 a
// statement, its SID in column node.
func whilePeersWrite(t *testing.T, ctx context.Context, pools []*pgxpool.Pool, try func()) {
	t.Helper()
	for _, p := range pools {
		_, err := p.Exec(ctx, `CREATE TABLE side (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable(), node int NOT NULL)`)
		require.NoError(t, err)
	}
	done := make(chan error, 1)
	go func() {
		for range 20 {
			for i, p := range pools {
				if _, err := p.Exec(ctx, `INSERT INTO side (node) SELECT $1 FROM generate_series(1, 100)`, i+1); err != nil {
					done <- err
					return
				}
			}
		}
		done <- nil
	}()
	try()
	require.NoError(t, <-done)
}

// requireRows wants the node's table item to have n rows.
func requireRows(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	var rows int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM item`).Scan(&rows))
	require.Equal(t, n, rows, "rows on the copy")
}

// meshNode creates the database app on n with the SQL functions, SID sid,
// the table item and the publication app of it and of ulid_flake_nodes
// (docs/deployments.md's recipe).
func meshNode(t *testing.T, n *pgtest.Node, sid int) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, n.Exec(ctx, `CREATE DATABASE app`))
	require.NoError(t, migrateNode(ctx, n))
	pool := newPool(t, n.DB("app"))
	_, err := pool.Exec(ctx, `SELECT ulid_flake_set_sid($1)`, sid)
	require.NoError(t, err, "%s: SID %d", n.Name, sid)
	_, err = pool.Exec(ctx, `CREATE TABLE item (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable(), node int NOT NULL);
		CREATE PUBLICATION app FOR TABLE item, ulid_flake_nodes`)
	require.NoError(t, err)
	return pool
}

// migrateNode runs migrations.Migrate on n's database app, as an
// application does at start.
func migrateNode(ctx context.Context, n *pgtest.Node) error {
	cfg, err := pgx.ParseConfig(n.DB("app"))
	if err != nil {
		return err
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	_, err = migrations.Migrate(ctx, db)
	return err
}

// subscribeMesh makes nodes a and b subscribe to each other's publication
// app (origin = none, copy_data = false), and waits until both apply.
func subscribeMesh(t *testing.T, nodes []*pgtest.Node, pools []*pgxpool.Pool, a, b int) {
	t.Helper()
	for _, p := range [][2]int{{a, b}, {b, a}} {
		sub, pub := nodes[p[0]], nodes[p[1]]
		_, err := pools[p[0]].Exec(context.Background(), fmt.Sprintf(`CREATE SUBSCRIPTION %s_from_%s CONNECTION '%s' PUBLICATION app
			WITH (origin = none, copy_data = false)`, sub.Name, pub.Name, pub.ConnInfo("app")))
		require.NoError(t, err, sub.Name)
	}
	for _, i := range []int{a, b} {
		require.Eventually(t, func() bool {
			var ready bool
			err := pools[i].QueryRow(context.Background(), `SELECT (SELECT count(DISTINCT subid) FROM pg_stat_subscription WHERE pid IS NOT NULL AND relid IS NULL)
					= (SELECT count(*) FROM pg_subscription s JOIN pg_database d ON d.oid = s.subdbid WHERE d.datname = current_database() AND s.subenabled)
				AND NOT EXISTS (SELECT 1 FROM pg_subscription_rel WHERE srsubstate <> 'r')`).Scan(&ready)
			return err == nil && ready
		}, 2*time.Minute, 100*time.Millisecond, "%s: the subscriptions did not start", nodes[i].Name)
	}
}

// announce runs Migrate on every node, once they subscribe to each other
// (the recipe's last step: each node's row reaches the others), and waits
// until every node has every node's row.
func announce(t *testing.T, nodes []*pgtest.Node, pools []*pgxpool.Pool) {
	t.Helper()
	for _, n := range nodes {
		require.NoError(t, migrateNode(context.Background(), n), n.Name)
	}
	for i := range nodes {
		waitNodeRows(t, pools[i], len(nodes))
	}
}

// waitNodeRows waits until the node's ulid_flake_nodes has n rows.
func waitNodeRows(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		var rows int
		err := pool.QueryRow(context.Background(), `SELECT count(*) FROM ulid_flake_nodes`).Scan(&rows)
		return err == nil && rows == n
	}, 2*time.Minute, 100*time.Millisecond, "ulid_flake_nodes never had %d rows", n)
}

// nodeID returns the node identity the node records for itself.
func nodeID(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var id string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT node_id::text FROM ulid_flake_state`).Scan(&id))
	return id
}

// gen is what a node's ulid_flake_scalable() makes IDs from.
type gen struct{ sid, offset int }

func generator(t *testing.T, pool *pgxpool.Pool) gen {
	t.Helper()
	var g gen
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT coalesce(ulid_flake_node_sid(), -1), "offset" FROM ulid_flake_state`).Scan(&g.sid, &g.offset))
	return g
}

// requireRefused runs stmt and wants a mesh refusal (55U01 to 55U04) naming
// the node other.
func requireRefused(t *testing.T, pool *pgxpool.Pool, stmt, other string) {
	t.Helper()
	_, err := pool.Exec(context.Background(), stmt)
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "%s: %v", stmt, err)
	require.Regexp(t, `^55U0[1-4]$`, pgErr.Code, "%s: %v", stmt, err)
	require.Contains(t, pgErr.Message, "ulid_flake mesh:", stmt)
	require.Contains(t, pgErr.Message, other, stmt)
}

// writeMesh inserts meshRows rows on every node at once (two sessions per
// node, the default ID, the node's SID in column node), then checks on
// every node: every row arrived (before rows more than the writes), no ID
// repeats, every ID carries its node's SID, and no apply conflict or error.
func writeMesh(t *testing.T, nodes []*pgtest.Node, pools []*pgxpool.Pool, sids []int, before int) {
	t.Helper()
	const sessions, batch = 2, 500
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
				for range meshRows / sessions / batch {
					if _, err := conn.Exec(context.Background(), `INSERT INTO item (node) SELECT $1 FROM generate_series(1, $2)`, sids[i], batch); err != nil {
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
	want := before + len(nodes)*meshRows
	for i, n := range nodes {
		waitRows(t, pools[i], want)
		var rows, distinct, foreign int
		require.NoError(t, pools[i].QueryRow(context.Background(), `SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id & 31 <> node)
			FROM item`).Scan(&rows, &distinct, &foreign))
		require.Equal(t, want, rows, n.Name)
		require.Equal(t, rows, distinct, "%s: duplicate IDs", n.Name)
		require.Zero(t, foreign, "%s: rows whose SID is not their node's", n.Name)
		require.Empty(t, conflicts(t, pools[i]), "%s: apply conflicts or errors", n.Name)
	}
}
