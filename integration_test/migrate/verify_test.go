package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestUlidFlakeRefusedOnAMeshNode: ulid_flake() ignores the SID, so a node
// with a SID, or one whose last check saw another node's row, refuses it
// (55U04) wherever it is called, not only in a column default:
// in a SELECT, through ulid_flake_block on a node without a SID, and
// for a role that is not the install's owner. ulid_flake_scalable() goes
// on; a node back to no SID and no other node makes ulid_flake() again.
func TestUlidFlakeRefusedOnAMeshNode(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		exec := func(stmt string, args ...any) error {
			_, err := sdb.ExecContext(ctx, stmt, args...)
			return err
		}
		_, err := migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		require.NoError(t, exec(`SELECT ulid_flake()`), "a node with no SID and no other node")

		require.NoError(t, exec(`SELECT ulid_flake_set_sid(7)`))
		requireState(t, exec(`SELECT ulid_flake()`), "55U04", "ulid_flake() ignores the node's SID (7)")
		require.NoError(t, exec(`CREATE TABLE t_explicit (id bigint PRIMARY KEY)`))
		requireState(t, exec(`INSERT INTO t_explicit SELECT ulid_flake() FROM generate_series(1, 3)`), "55U04", "ulid_flake_scalable()")
		require.NoError(t, exec(`INSERT INTO t_explicit SELECT ulid_flake_scalable() FROM generate_series(1, 3)`))
		var sids string
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT string_agg(DISTINCT (id & 31)::text, ',') FROM t_explicit`).Scan(&sids))
		require.Equal(t, "7", sids, "every row made with the node's SID")
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err, "Migrate's check keeps the refusal")
		requireState(t, exec(`SELECT ulid_flake()`), "55U04", "ulid_flake_scalable()")

		// No SID, and another node's row: blocks have no SID to use.
		require.NoError(t, exec(`SELECT ulid_flake_set_sid(NULL)`))
		require.NoError(t, exec(`SELECT ulid_flake()`), "no SID, no other node")
		require.NoError(t, exec(`INSERT INTO ulid_flake_nodes VALUES ('00000000-0000-4000-8000-000000000009', 9, 1, 1, 1, now())`))
		require.NoError(t, exec(`SELECT ulid_flake_check_node()`))
		requireState(t, exec(`SELECT ulid_flake()`), "55U04", "none, and other nodes write here")
		requireState(t, exec(`SELECT ulid_flake_block(10)`), "55U04", "ulid_flake_scalable()")

		require.NoError(t, exec(`SELECT ulid_flake_retire_node('00000000-0000-4000-8000-000000000009')`))
		require.NoError(t, exec(`SELECT ulid_flake_check_node()`))
		require.NoError(t, exec(`SELECT ulid_flake_block(10)`), "alone again")
	})
}

// TestFirstIDVerifiesTheNode: the ID functions' bodies hold the server
// start their node was last checked on. Made on another (here: bodies
// written with none, as ulid_flake_build leaves them when the recorded start
// is cleared), the first ID runs the check first, as any role, and
// records this start; a check that refuses makes no ID and draws no
// sequence value (a copy of node N on another timeline, while another
// node's row is here: 55U01), for DEFAULT, explicit calls and blocks.
func TestFirstIDVerifiesTheNode(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, owner, app, clear := verifyDB(t, s, "_verify")
			unchecked := func() {
				t.Helper()
				clear()
				require.Equal(t, sql.NullString{}, startedAt(t, owner))
			}
			seq := func() (v int64) {
				require.NoError(t, owner.QueryRowContext(ctx, `SELECT last_value FROM ulid_flake_seq`).Scan(&v))
				return
			}

			for _, first := range []string{`INSERT INTO item (v) VALUES (1)`, `SELECT ulid_flake_scalable()`, `SELECT ulid_flake_block(5)`} {
				unchecked()
				_, err := app.ExecContext(ctx, first)
				require.NoError(t, err, first)
				var started, now string
				require.NoError(t, owner.QueryRowContext(ctx, `SELECT pg_postmaster_start_time()::text`).Scan(&now))
				started = startedAt(t, owner).String
				require.Equal(t, now, started, "%s: the check recorded this start", first)
				var def string
				require.NoError(t, owner.QueryRowContext(ctx, `SELECT pg_get_functiondef('ulid_flake_scalable(integer)'::regprocedure)`).Scan(&def))
				require.Contains(t, def, "pg_postmaster_start_time() = '", first)
				require.NotContains(t, def, "NULL::timestamp", "%s: the bodies hold this start", first)
			}

			// A copy of this node on another timeline, beside another node's row.
			_, err := owner.ExecContext(ctx, `INSERT INTO ulid_flake_nodes VALUES ('00000000-0000-4000-8000-000000000002', 2, 1, 1, 1, now());
				UPDATE ulid_flake_nodes SET timeline = timeline + 1 WHERE node_id = (SELECT node_id FROM ulid_flake_state)`)
			require.NoError(t, err)
			unchecked()
			before := seq()
			for _, first := range []string{`INSERT INTO item (v) VALUES (2)`, `SELECT ulid_flake_scalable(1)`, `SELECT ulid_flake_block(5)`} {
				requireState(t, execErr(ctx, app, first), "55U01", "this database is a copy of node")
			}
			require.Equal(t, before, seq(), "no sequence value drawn")
			var rows int
			require.NoError(t, owner.QueryRowContext(ctx, `SELECT count(*) FROM item WHERE v = 2`).Scan(&rows))
			require.Zero(t, rows)
			_, err = migrations.Migrate(ctx, owner)
			require.ErrorIs(t, err, migrations.ErrMesh, "Migrate gives the same refusal")
		})
	}
}

func startedAt(t *testing.T, db *sql.DB) (s sql.NullString) {
	t.Helper()
	require.NoError(t, db.QueryRow(`SELECT started_at::text FROM ulid_flake_state`).Scan(&s))
	return
}

func execErr(ctx context.Context, db *sql.DB, stmt string) error {
	_, err := db.ExecContext(ctx, stmt)
	return err
}

// requireState wants a PostgreSQL error with SQLSTATE code whose message
// contains contains.
func requireState(t *testing.T, err error, code, contains string) {
	t.Helper()
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "want %s, got %v", code, err)
	require.Equal(t, code, pgErr.Code, "%v", err)
	require.Contains(t, pgErr.Message, contains)
}
