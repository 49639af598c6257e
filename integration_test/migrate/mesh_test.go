package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestMeshNodeFunctions: the operator's side of ulid_flake_nodes on one
// server, with another node's row written by hand as replication would
// write it. Such a row checks the node before its next ID: ulid_flake()
// on a node that was alone is refused (55U04), and so is a SID the row
// holds (55U02). A SID that row holds is refused by ulid_flake_set_sid and by
// Migrate (ErrMesh) until ulid_flake_retire_node frees it; a copy of this
// node made on another system (the state's system identifier changed)
// is refused while that row is here, with a hint that names
// ulid_flake_new_node and the retire of the node it copies (no copy keeps
// its source's SID: there is no adopt), and ulid_flake_new_node gives it a
// new identity, offset and SID, and keeps the old row; retiring this node's own row, or a
// node that has none, is 22023. Without another node's row, the same copy
// is recorded as before (TestMigrateRedrawsOnClones).
func TestMeshNodeFunctions(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, exec := migratedNode(t, db)
		var err error
		refused := func(err error, code, contains string) {
			t.Helper()
			var pgErr *pgconn.PgError
			require.True(t, errors.As(err, &pgErr), "%v", err)
			require.Equal(t, code, pgErr.Code, "%v", err)
			require.Contains(t, pgErr.Message, contains)
		}
		node := func() (id string, offset int64) {
			t.Helper()
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT node_id::text, "offset" FROM ulid_flake_state`).Scan(&id, &offset))
			return
		}
		rows := func() (n int) {
			t.Helper()
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM ulid_flake_nodes`).Scan(&n))
			return
		}

		// Rows that arrive (by hand here as replication writes them;
		// topology's tests replicate them) check the node before its next
		// ID, with no check_node or Migrate run: another node's row makes
		// this node one of a mesh, where ulid_flake() is refused (55U04);
		// retired, and the node makes IDs again.
		const early = "00000000-0000-4000-8000-000000000007"
		require.NoError(t, exec(`SELECT ulid_flake()`))
		require.NoError(t, exec(`INSERT INTO ulid_flake_nodes VALUES ($1, 7, 1, 1, 1, now())`, early))
		refused(exec(`SELECT ulid_flake()`), "55U04", "ignores the node's SID")
		require.NoError(t, exec(`SELECT ulid_flake_retire_node($1::uuid)`, early))
		require.NoError(t, exec(`SELECT ulid_flake()`))

		require.NoError(t, exec(`SELECT ulid_flake_set_sid(4)`))
		me, offset := node()
		// A row that arrives with this node's SID: its next ID is refused
		// (55U02), and so is a block.
		require.NoError(t, exec(`SELECT ulid_flake_scalable()`))
		require.NoError(t, exec(`INSERT INTO ulid_flake_nodes VALUES ($1, 4, 1, 1, 1, now())`, early))
		refused(exec(`SELECT ulid_flake_scalable()`), "55U02", "SID 4 is node "+early)
		refused(exec(`SELECT ulid_flake_block(3)`), "55U02", "SID 4 is node "+early)
		require.NoError(t, exec(`SELECT ulid_flake_retire_node($1::uuid)`, early))
		require.NoError(t, exec(`SELECT ulid_flake_scalable()`))
		var sid sql.NullInt64
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT sid FROM ulid_flake_nodes WHERE node_id = $1::uuid`, me).Scan(&sid))
		require.Equal(t, int64(4), sid.Int64, "this node's row")

		const other = "00000000-0000-4000-8000-000000000005"
		require.NoError(t, exec(`INSERT INTO ulid_flake_nodes VALUES ($1, 5, 1, 1, 1, now())`, other))
		refused(exec(`SELECT ulid_flake_set_sid(5)`), "55U02", "SID 5 is node "+other)
		// The SID fixed by hand (as a copied function would hold it).
		require.NoError(t, exec(`CREATE OR REPLACE FUNCTION ulid_flake_node_sid() RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE RETURN 5`))
		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrMesh)
		require.Equal(t, "55U02", sqlCode(err), "%v", err)
		require.ErrorContains(t, err, "SID 5 is node "+other)
		require.NoError(t, exec(`SELECT ulid_flake_set_sid(4)`))
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)

		refused(exec(`SELECT ulid_flake_retire_node($1::uuid)`, me), "22023", "is this one")
		refused(exec(`SELECT ulid_flake_retire_node('00000000-0000-4000-8000-000000000006')`), "22023", "no node")

		// A copy on another system, while another node's row is here.
		require.NoError(t, exec(`UPDATE ulid_flake_state SET system_id = system_id + 1`))
		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrMesh)
		require.Equal(t, "55U01", sqlCode(err), "%v", err)
		require.ErrorContains(t, err, "a copy of node "+me+" (SID 4)")
		var pgErr *pgconn.PgError
		require.True(t, errors.As(err, &pgErr))
		require.Contains(t, pgErr.Hint, "ulid_flake_new_node(sid::integer)")
		require.Contains(t, pgErr.Hint, "ulid_flake_retire_node('"+me+"'::uuid)")
		refused(exec(`SELECT ulid_flake_set_sid(6)`), "55U01", "a copy of node "+me)
		refused(exec(`SELECT ulid_flake_check_node()`), "55U01", "a copy of node "+me)
		refused(exec(`SELECT ulid_flake_new_node(5)`), "55U02", "SID 5 is node "+other)
		refused(exec(`SELECT ulid_flake_new_node(NULL)`), "22004", "needs a SID")
		require.NoError(t, exec(`SELECT ulid_flake_new_node(6)`))
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		id, again := node()
		require.NotEqual(t, me, id, "a new node's identity")
		require.NotEqual(t, offset, again, "a new node's offset")
		require.Equal(t, 3, rows(), "the copied node's row stays")

		require.NoError(t, exec(`SELECT ulid_flake_retire_node($1::uuid)`, other))
		require.NoError(t, exec(`SELECT ulid_flake_retire_node($1::uuid)`, me))
		require.NoError(t, exec(`SELECT ulid_flake_set_sid(5)`), "a retired node's SID is free")
		require.Equal(t, 1, rows())
	})
}

// TestMeshDownRemovesTheNodes: version 5's down removes what its up adds
// (the mesh's table, taken out of a publication with it, the state's node
// identity and epoch, the functions), and the install schema has the
// objects and columns it had at version 4, 0.1.0's; up again records this
// node.
func TestMeshDownRemovesTheNodes(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := itest.EmptyDB(t, s)
			objects := func() string {
				t.Helper()
				var o string
				require.NoError(t, db.QueryRowContext(ctx, `SELECT string_agg(x, E'\n' ORDER BY x) FROM (
					SELECT c.relname || '.' || a.attname || ':' || a.atttypid::regtype::text AS x
						FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
						WHERE c.relnamespace = current_schema()::regnamespace
					UNION ALL SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace) s`).Scan(&o))
				return o
			}
			_, err := migrations.Migrate(ctx, db, migrations.WithTarget(4))
			require.NoError(t, err)
			four := objects()
			_, err = migrations.Migrate(ctx, db)
			require.NoError(t, err)
			require.NotEqual(t, four, objects())
			_, err = db.ExecContext(ctx, `CREATE PUBLICATION mesh FOR TABLE ulid_flake_nodes`)
			require.NoError(t, err)
			_, err = migrations.Migrate(ctx, db, migrations.WithTarget(4))
			require.NoError(t, err)
			require.Equal(t, four, objects(), "version 5's down leaves another schema than version 4's")
			var published int
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM pg_publication_tables WHERE pubname = 'mesh'`).Scan(&published))
			require.Zero(t, published)
			var drawn bool
			require.NoError(t, db.QueryRowContext(ctx, `SELECT ulid_flake_check_node()`).Scan(&drawn))
			require.False(t, drawn, "version 4's check_node, on the database it was drawn on")

			_, err = migrations.Migrate(ctx, db)
			require.NoError(t, err)
			var rows int
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM ulid_flake_nodes n JOIN ulid_flake_state s ON s.node_id = n.node_id`).Scan(&rows))
			require.Equal(t, 1, rows, "this node's row, again")
		})
	}
}

// TestArrivingRowIsNotLost attacks the trigger that checks the node when
// another node's row arrives (ulid_flake_nodes_arrived): a row whose SID
// changes to this node's by UPDATE is seen as an INSERT is; a lock it
// cannot take fails the write (not under the writer's lock_timeout,
// which the trigger does not inherit: it fails only when the writer's
// statement is cancelled, 57014) instead of losing the arrival with a warning;
// this node's own row changed to another SID, or a TRUNCATE, checks the
// node at its next ID; and triggers that a data-only restore's ENABLE
// TRIGGER ALL left firing outside replication only, that their owner
// disabled or dropped, or whose function was dropped or given another
// body, are put back, enabled ALWAYS, by Migrate.
func TestArrivingRowIsNotLost(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, exec := migratedNode(t, db)
		var err error
		code := func(err error) string {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) {
				return pgErr.Code
			}
			return fmt.Sprint(err)
		}
		enabled := func() (e string) {
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT coalesce(string_agg(tgenabled::text, ','), '') FROM pg_trigger
				WHERE tgrelid = 'ulid_flake_nodes'::regclass AND tgname IN ('ulid_flake_nodes_arrived', 'ulid_flake_nodes_truncated')`).Scan(&e))
			return
		}
		require.NoError(t, exec(`SELECT ulid_flake_set_sid(4)`))
		require.Equal(t, "A,A", enabled(), "fire in replication's apply too")

		const other = "00000000-0000-4000-8000-000000000009"
		require.NoError(t, exec(`INSERT INTO ulid_flake_nodes VALUES ($1, 9, 1, 1, 1, now())`, other))
		require.NoError(t, exec(`SELECT ulid_flake_scalable()`))
		require.NoError(t, exec(`UPDATE ulid_flake_nodes SET sid = 4 WHERE node_id = $1`, other))
		require.Equal(t, "55U02", code(exec(`SELECT ulid_flake_scalable()`)), "a SID changed to this node's by UPDATE")
		require.NoError(t, exec(`SELECT ulid_flake_retire_node($1::uuid)`, other))
		require.NoError(t, exec(`SELECT ulid_flake_scalable()`))

		// This node's own row, changed to another SID, or gone with a
		// TRUNCATE: the next ID checks the node, which writes the row again.
		ownSID := func() (sid sql.NullInt64) {
			err := sdb.QueryRowContext(ctx, `SELECT n.sid FROM ulid_flake_nodes AS n JOIN ulid_flake_state AS s USING (node_id)`).Scan(&sid)
			if errors.Is(err, sql.ErrNoRows) {
				return
			}
			require.NoError(t, err)
			return
		}
		require.NoError(t, exec(`UPDATE ulid_flake_nodes SET sid = 9 WHERE node_id = (SELECT node_id FROM ulid_flake_state)`))
		require.NoError(t, exec(`SELECT ulid_flake_scalable()`))
		require.Equal(t, int64(4), ownSID().Int64, "the check wrote this node's row again")
		require.NoError(t, exec(`TRUNCATE ulid_flake_nodes`))
		require.False(t, ownSID().Valid)
		require.NoError(t, exec(`SELECT ulid_flake_scalable()`))
		require.Equal(t, int64(4), ownSID().Int64, "the check wrote this node's row again")

		// Another transaction holds the state's row lock (as the first ID
		// after a start does, to its end): the write waits or fails; it
		// never goes through with the arrival lost.
		holder, err := sdb.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = holder.ExecContext(ctx, `SELECT FROM ulid_flake_state FOR UPDATE`)
		require.NoError(t, err)
		conn, err := sdb.Conn(ctx)
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.ExecContext(ctx, `SET lock_timeout = '100ms'; SET statement_timeout = '600ms'`)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `INSERT INTO ulid_flake_nodes VALUES ($1, 4, 1, 1, 1, now())`, other)
		require.Equal(t, "57014", code(err), "the write waits past lock_timeout (not the trigger's), and fails when cancelled: %v", err)
		_, err = conn.ExecContext(ctx, `RESET lock_timeout; RESET statement_timeout`)
		require.NoError(t, err)
		require.NoError(t, holder.Rollback())
		var rows int
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM ulid_flake_nodes WHERE node_id = $1`, other).Scan(&rows))
		require.Zero(t, rows, "no write went through without its check")
		require.NoError(t, exec(`SELECT ulid_flake_scalable()`))

		// What a data-only restore does, an owner's DISABLE or DROP, and
		// another body.
		for _, stmt := range []string{
			`ALTER TABLE ulid_flake_nodes DISABLE TRIGGER ALL; ALTER TABLE ulid_flake_nodes ENABLE TRIGGER ALL`,
			`ALTER TABLE ulid_flake_nodes DISABLE TRIGGER ulid_flake_nodes_arrived`,
			`DROP TRIGGER ulid_flake_nodes_arrived ON ulid_flake_nodes`,
			`DROP FUNCTION ulid_flake_nodes_arrived() CASCADE`,
			`CREATE OR REPLACE FUNCTION ulid_flake_nodes_arrived() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NULL; END$$`,
		} {
			require.NoError(t, exec(stmt))
			if !strings.HasPrefix(stmt, "CREATE") {
				require.NotEqual(t, "A,A", enabled(), stmt)
			}
			_, err = migrations.Migrate(ctx, sdb)
			require.NoError(t, err, stmt)
			require.Equal(t, "A,A", enabled(), "Migrate puts them back after %s", stmt)
			var src string
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT prosrc FROM pg_proc WHERE proname = 'ulid_flake_nodes_arrived' AND pronamespace = current_schema()::regnamespace`).Scan(&src))
			require.Contains(t, src, "ulid_flake_arrival", stmt)
		}
		_, err = conn.ExecContext(ctx, `SET session_replication_role = replica`)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `INSERT INTO ulid_flake_nodes VALUES ($1, 4, 1, 1, 1, now())`, other)
		require.NoError(t, err)
		require.Equal(t, "55U02", code(exec(`SELECT ulid_flake_scalable()`)), "an arrival in replication's role, after the repair")
	})
}

// migratedNode opens db, runs Migrate on it, and returns it with a
// function that runs one statement on it.
func migratedNode(t *testing.T, db *pgtest.DB) (*sql.DB, func(stmt string, args ...any) error) {
	t.Helper()
	ctx := context.Background()
	sdb := itest.StdDB(t, db)
	_, err := migrations.Migrate(ctx, sdb)
	require.NoError(t, err)
	return sdb, func(stmt string, args ...any) error {
		_, err := sdb.ExecContext(ctx, stmt, args...)
		return err
	}
}
