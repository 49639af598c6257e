package extension_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// refusedElsewhere: an insert with the extension's default into orders, on
// c, is refused with 55000 because the state was recorded on another
// system or database; the hint says how to draw this database's own.
func refusedElsewhere(t *testing.T, c *pgx.Conn) {
	t.Helper()
	_, err := c.Exec(context.Background(), `INSERT INTO orders (k) VALUES (1)`)
	require.Equal(t, "55000", sqlState(err), "%v", err)
	var pe *pgconn.PgError
	require.ErrorAs(t, err, &pe)
	require.Contains(t, pe.Message, "ulid_flake_state was recorded on")
	require.Contains(t, pe.Hint, "ulid_flake_check_node()")
	require.Contains(t, pe.Hint, "publish tables by name")
}

// TestExtensionStateElsewhere: a state recorded on another database (its
// database_oid) or another system (its system_id), as a restore, a
// template, pg_upgrade or a replicated row leaves it, is refused (55000)
// in a session that made IDs before and in a new one, until
// ulid_flake_check_node() records this database's own, with a new offset.
func TestExtensionStateElsewhere(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		exec := func(q string) { t.Helper(); _, err := db.Exec(ctx, q); require.NoError(t, err, q) }
		exec(`CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT ` + next + `, k int NOT NULL)`)
		before, err := pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		defer before.Close(ctx)
		_, err = before.Exec(ctx, `INSERT INTO orders (k) VALUES (0)`)
		require.NoError(t, err)
		for _, col := range []string{"database_oid", "system_id"} {
			exec(fmt.Sprintf(`UPDATE ulid_flake_state SET %[1]s = (%[1]s::bigint + 1)::%[2]s`, col,
				map[string]string{"database_oid": "oid", "system_id": "bigint"}[col]))
			fresh, err := pgx.Connect(ctx, db.URL)
			require.NoError(t, err)
			refusedElsewhere(t, before)
			refusedElsewhere(t, fresh)
			require.NoError(t, fresh.Close(ctx))
			var drawn bool
			require.NoError(t, db.QueryRow(ctx, `SELECT ulid_flake_check_node()`).Scan(&drawn))
			require.True(t, drawn, "%s: ulid_flake_check_node() kept the state", col)
			checkState(t, before, offsetOf(t, ctx, before), flake.DefaultEpoch())
			_, err = before.Exec(ctx, `INSERT INTO orders (k) VALUES (2)`)
			require.NoError(t, err)
		}
	})
}

// TestExtensionStateReplicated: database B subscribes to a publication FOR
// ALL TABLES of database A on the same server. A's next write of its
// ulid_flake_state replaces B's row with A's (A's offset, system and
// database): B's inserts with the extension's default are refused, where
// they would have made the low bits of A's IDs. Publishing the tables by
// name instead, and ulid_flake_check_node() on B (once B's former node
// identity, which A's row replaced, is retired), make B's own state again,
// which A's later writes no longer reach.
func TestExtensionStateReplicated(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, a *pgtest.DB) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		var level string
		require.NoError(t, a.QueryRow(ctx, `SHOW wal_level`).Scan(&level))
		if level != "logical" {
			t.Skipf("the server runs with wal_level=%s, not logical", level)
		}
		if !a.Server.InContainer() {
			t.Skip("the subscription reaches the publisher by the container's address; the server is not one")
		}
		b := a.Server.NewDB(t)
		_, err := b.Exec(ctx, `SELECT ulid_flake_check_node()`)
		require.NoError(t, err)
		for _, d := range []*pgtest.DB{a, b} {
			_, err := d.Exec(ctx, `CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT `+next+`, k int NOT NULL)`)
			require.NoError(t, err)
		}
		bc, err := pgx.Connect(ctx, b.URL)
		require.NoError(t, err)
		defer bc.Close(ctx)
		var bNode string
		require.NoError(t, b.QueryRow(ctx, `SELECT node_id::text FROM ulid_flake_state`).Scan(&bNode))
		_, err = bc.Exec(ctx, `INSERT INTO orders (k) VALUES (-1)`)
		require.NoError(t, err)

		slot := "s_" + b.Name
		_, err = a.Exec(ctx, `CREATE PUBLICATION everything FOR ALL TABLES`)
		require.NoError(t, err)
		_, err = a.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot)
		require.NoError(t, err)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for _, stmt := range []string{`ALTER SUBSCRIPTION sub DISABLE`, `ALTER SUBSCRIPTION sub SET (slot_name = NONE)`, `DROP SUBSCRIPTION sub`} {
				if _, err := b.Exec(ctx, stmt); err != nil {
					t.Errorf("%s: %v", stmt, err)
				}
			}
			for {
				if _, err := a.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, slot); err == nil || ctx.Err() != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
		conninfo, err := a.Server.ConnInfo(ctx, a.Name, "", "")
		require.NoError(t, err)
		// No initial copy: B has its own rows (and its own state row, whose
		// copy would conflict); what A writes from now on streams.
		_, err = b.Exec(ctx, fmt.Sprintf(`CREATE SUBSCRIPTION sub CONNECTION '%s' PUBLICATION everything
			WITH (create_slot = false, slot_name = '%s', copy_data = false)`, strings.ReplaceAll(conninfo, "'", "''"), slot))
		require.NoError(t, err)

		var aOID, bOID uint32
		require.NoError(t, a.QueryRow(ctx, `SELECT oid FROM pg_database WHERE datname = current_database()`).Scan(&aOID))
		require.NoError(t, b.QueryRow(ctx, `SELECT oid FROM pg_database WHERE datname = current_database()`).Scan(&bOID))
		stateOf := func(d *pgtest.DB) (dbOID uint32) {
			require.NoError(t, d.QueryRow(ctx, `SELECT database_oid FROM ulid_flake_state`).Scan(&dbOID))
			return dbOID
		}
		require.Equal(t, bOID, stateOf(b))
		// A writes its state (what ulid_flake_build, ulid_flake_set_epoch or
		// ulid_flake_check_node after a move do), and a row of orders.
		_, err = a.Exec(ctx, `UPDATE ulid_flake_state SET drawn_at = now(); INSERT INTO orders (k) VALUES (1)`)
		require.NoError(t, err)
		for stateOf(b) != aOID {
			require.NoError(t, ctx.Err(), "A's state did not reach B")
			time.Sleep(100 * time.Millisecond)
		}
		require.Equal(t, offsetOf(t, ctx, a), offsetOf(t, ctx, b), "B holds A's offset")
		refusedElsewhere(t, bc)
		// While the subscription copies the table, the check refuses B as
		// a copy of A's node: the state's node identity is A's now.
		_, err = b.Exec(ctx, `SELECT ulid_flake_check_node()`)
		require.Equal(t, "55U01", sqlState(err), "%v", err)

		// Publish by name, and record B's own state.
		_, err = a.Exec(ctx, `DROP PUBLICATION everything; CREATE PUBLICATION everything FOR TABLE orders`)
		require.NoError(t, err)
		_, err = b.Exec(ctx, `ALTER SUBSCRIPTION sub REFRESH PUBLICATION WITH (copy_data = false)`)
		require.NoError(t, err)
		// A's row also brought A's node identity, so B's own row in
		// ulid_flake_nodes now looks like another node's, and migration version 5's
		// ulid_flake_check_node() refuses B as a copy of a mesh node; B's
		// former identity is retired first.
		_, err = b.Exec(ctx, `SELECT ulid_flake_check_node()`)
		require.Equal(t, "55U01", sqlState(err), "%v", err)
		require.ErrorContains(t, err, "ulid_flake mesh:")
		_, err = b.Exec(ctx, `SELECT ulid_flake_retire_node($1::uuid)`, bNode)
		require.NoError(t, err)
		var drawn bool
		require.NoError(t, b.QueryRow(ctx, `SELECT ulid_flake_check_node()`).Scan(&drawn))
		require.True(t, drawn)
		require.Equal(t, bOID, stateOf(b))
		_, err = bc.Exec(ctx, `INSERT INTO orders (k) VALUES (-2)`)
		require.NoError(t, err)
		// A's next write of its state stays on A; its orders still stream.
		_, err = a.Exec(ctx, `UPDATE ulid_flake_state SET drawn_at = now(); INSERT INTO orders (k) VALUES (2)`)
		require.NoError(t, err)
		for {
			var n int
			require.NoError(t, b.QueryRow(ctx, `SELECT count(*) FROM orders WHERE k = 2`).Scan(&n))
			if n == 1 {
				break
			}
			require.NoError(t, ctx.Err(), "A's orders no longer reach B")
			time.Sleep(100 * time.Millisecond)
		}
		require.Equal(t, bOID, stateOf(b))
		checkState(t, bc, offsetOf(t, ctx, b), flake.DefaultEpoch())
	})
}
