package extension_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// verifyFixture is a database whose table item takes its IDs from the
// extension's default, written by role app (INSERT and SELECT only), and
// a way to clear the server start the node was last checked on, as a
// restart, a promoted replica or a copy leaves it.
type verifyFixture struct {
	db    *pgtest.DB
	app   string
	owner *pgx.Conn
}

func newVerifyFixture(t *testing.T, db *pgtest.DB) *verifyFixture {
	t.Helper()
	ctx := context.Background()
	f := &verifyFixture{db: db, app: "app_" + db.Name}
	f.exec(t, fmt.Sprintf(`CREATE ROLE %[1]s LOGIN PASSWORD 'pw';
		CREATE TABLE item (id bigint PRIMARY KEY DEFAULT `+next+`, v int);
		GRANT USAGE ON SCHEMA public TO %[1]s; GRANT INSERT, SELECT ON item TO %[1]s`, f.app))
	t.Cleanup(func() {
		_, _ = db.Exec(context.Background(), fmt.Sprintf(`DROP OWNED BY %[1]s; DROP ROLE %[1]s`, f.app))
	})
	var err error
	f.owner, err = pgx.Connect(ctx, db.URL)
	require.NoError(t, err)
	t.Cleanup(func() { f.owner.Close(context.Background()) })
	return f
}

func (f *verifyFixture) exec(t *testing.T, q string) {
	t.Helper()
	_, err := f.db.Exec(context.Background(), q)
	require.NoError(t, err, q)
}

// unchecked clears ulid_flake_state.started_at and writes the ID
// functions' bodies with it, as the owner.
func (f *verifyFixture) unchecked(t *testing.T) {
	t.Helper()
	f.exec(t, `UPDATE ulid_flake_state SET started_at = NULL; SELECT ulid_flake_build("offset") FROM ulid_flake_state`)
	require.Nil(t, f.startedAt(t), "started_at cleared")
}

// startedAt is ulid_flake_state.started_at as text, nil for NULL.
func (f *verifyFixture) startedAt(t *testing.T) (s *string) {
	t.Helper()
	require.NoError(t, f.owner.QueryRow(context.Background(), `SELECT started_at::text FROM ulid_flake_state`).Scan(&s))
	return
}

// recorded: started_at is this server's start.
func (f *verifyFixture) recorded(t *testing.T, what string) {
	t.Helper()
	var now string
	require.NoError(t, f.owner.QueryRow(context.Background(), `SELECT pg_postmaster_start_time()::text`).Scan(&now))
	s := f.startedAt(t)
	require.NotNil(t, s, "%s: started_at recorded", what)
	require.Equal(t, now, *s, "%s: the check recorded this server start", what)
}

// TestExtensionFirstIDVerifiesTheNode (issue #40): the extension makes no
// ID before the node is known, as ulid_flake() does (migration 5). With
// ulid_flake_state.started_at cleared (another server start: a restart, a
// promoted replica, a copy), the first INSERT with the default
// ulid_flake_next(nextval('ulid_flake_seq')), by a role that is not the
// install's owner, runs ulid_flake_verify(false) first: it records this
// server start, and the row gets an ID with the install's offset; in a
// session that made IDs before as in a new one. On a node of a mesh
// (another node's row arrives in ulid_flake_nodes, which clears the
// start, no check run), the INSERT is refused with 55U04 (plain-layout IDs ignore the SID) and writes no row, and
// started_at stays cleared; once the other node is retired, IDs are made
// again. With ulid_flake_verify(boolean) gone, the call fails with 55000
// naming it.
func TestExtensionFirstIDVerifiesTheNode(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		f := newVerifyFixture(t, db)
		before := connectAs(t, db, f.app)
		_, err := before.Exec(ctx, `INSERT INTO item (v) VALUES (0)`)
		require.NoError(t, err)
		f.recorded(t, "run's ulid_flake_check_node()")
		off := offsetOf(t, ctx, f.owner)

		insert := func(c *pgx.Conn, v int) error {
			var id, s int64
			err := c.QueryRow(ctx, `INSERT INTO item (v) VALUES ($1) RETURNING id, currval('ulid_flake_seq')`, v).Scan(&id, &s)
			if err == nil {
				require.Equal(t, low(s, off), id&p, "the install's offset")
			}
			return err
		}
		rows := func(v int) (n int) {
			require.NoError(t, f.owner.QueryRow(ctx, `SELECT count(*) FROM item WHERE v = $1`, v).Scan(&n))
			return
		}

		// Alone: the first ID checks the node and records this start.
		for i, c := range []*pgx.Conn{before, connectAs(t, db, f.app)} {
			f.unchecked(t)
			require.NoError(t, insert(c, 1), "session %d", i)
			f.recorded(t, fmt.Sprintf("session %d's INSERT", i))
			require.NoError(t, insert(c, 1), "session %d, checked", i)
		}
		require.Equal(t, 4, rows(1))
		require.Equal(t, off, offsetOf(t, ctx, f.owner), "the offset kept")

		// Another node's row: this node is of a mesh. Its arrival alone
		// (as replication writes it; no check run) clears the start.
		f.exec(t, `INSERT INTO ulid_flake_nodes VALUES ('00000000-0000-4000-8000-000000000009', 9, 1, 1, 1, now())`)
		require.Nil(t, f.startedAt(t), "another node's row arrived: the node is checked at its next ID")
		for i, c := range []*pgx.Conn{before, connectAs(t, db, f.app)} {
			err := insert(c, 2)
			require.Equal(t, "55U04", sqlState(err), "session %d: %v", i, err)
			require.Contains(t, err.Error(), "ignores the node's SID", "session %d", i)
		}
		require.Zero(t, rows(2), "no row written")
		require.Nil(t, f.startedAt(t), "the refused check recorded no start")

		// Alone again.
		f.exec(t, `SELECT ulid_flake_retire_node('00000000-0000-4000-8000-000000000009')`)
		f.unchecked(t)
		require.NoError(t, insert(before, 3))
		f.recorded(t, "alone again")

		// No ulid_flake_verify(boolean) where started_at is.
		f.exec(t, `ALTER FUNCTION ulid_flake_verify(boolean) RENAME TO ulid_flake_verify_gone`)
		f.unchecked(t)
		err = insert(before, 4)
		require.Equal(t, "55000", sqlState(err), "%v", err)
		require.Contains(t, err.Error(), "no function public.ulid_flake_verify(boolean)")
		require.Zero(t, rows(4))
		f.exec(t, `ALTER FUNCTION ulid_flake_verify_gone(boolean) RENAME TO ulid_flake_verify`)
		require.NoError(t, insert(before, 4))
		f.recorded(t, "verify back")
	})
}

// TestExtensionCopyVerifiesOnce: a COPY of many rows into a table whose
// default is ulid_flake_next, once started_at is cleared, checks the node
// once (the module says so at DEBUG1), reads the state twice (before and
// after the check), records this server start and gives every row an ID
// of its own; the next COPY checks nothing and reads the state once.
func TestExtensionCopyVerifiesOnce(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		f := newVerifyFixture(t, db)
		cfg, err := pgx.ParseConfig(db.URL)
		require.NoError(t, err)
		cfg.User, cfg.Password = f.app, "pw"
		var reads, verifies atomic.Int64
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			switch {
			case strings.HasPrefix(n.Message, "ulid_flake_next: read "):
				reads.Add(1)
			case strings.HasPrefix(n.Message, "ulid_flake_next: verifying the node"):
				verifies.Add(1)
			}
		}
		c, err := pgx.ConnectConfig(ctx, cfg)
		require.NoError(t, err)
		defer c.Close(ctx)
		_, err = c.Exec(ctx, `SET client_min_messages = debug1`)
		require.NoError(t, err)

		const rows = 200_000
		copyRows := func(base int) {
			t.Helper()
			n, err := c.CopyFrom(ctx, pgx.Identifier{"item"}, []string{"v"}, pgx.CopyFromFunc(func() func() ([]any, error) {
				i := 0
				return func() ([]any, error) {
					if i == rows {
						return nil, nil
					}
					i++
					return []any{int32(base + i)}, nil
				}
			}()))
			require.NoError(t, err)
			require.EqualValues(t, rows, n)
		}

		f.unchecked(t)
		reads.Store(0)
		verifies.Store(0)
		copyRows(0)
		require.EqualValues(t, 1, verifies.Load(), "checks of the node by a COPY after started_at was cleared")
		require.EqualValues(t, 2, reads.Load(), "reads of the state: before and after the check")
		f.recorded(t, "the COPY")

		reads.Store(0)
		verifies.Store(0)
		copyRows(rows)
		require.Zero(t, verifies.Load(), "checks of the node by the next COPY")
		require.EqualValues(t, 1, reads.Load(), "reads of the state by the next COPY")

		var n, d int64
		require.NoError(t, f.owner.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM item`).Scan(&n, &d))
		require.EqualValues(t, 2*rows, n)
		require.Equal(t, n, d, "every row an ID of its own")
	})
}

// TestExtensionParallelWorkerDoesNotVerify: a parallel worker may not
// write, so one that finds the node unchecked since the server started
// (started_at cleared) fails with 55000, saying so, instead of checking
// it; whether the server launches a worker is its own choice, so a query
// that runs in the leader alone checks the node and succeeds. Either way a
// later statement of the leader checks it and the query then runs.
func TestExtensionParallelWorkerDoesNotVerify(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		f := newVerifyFixture(t, db)
		c := connectAs(t, db, f.app)
		f.exec(t, fmt.Sprintf(`CREATE UNLOGGED TABLE src AS SELECT g FROM generate_series(1, 100000) g; ANALYZE src;
			GRANT SELECT ON src TO %s`, f.app))
		_, err := c.Exec(ctx, `SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
			SET max_parallel_workers_per_gather = 2; SET parallel_leader_participation = off`)
		require.NoError(t, err)
		query := `SELECT count(ulid_flake_next(g)) FROM src`
		var plan string
		require.NoError(t, c.QueryRow(ctx, `EXPLAIN (COSTS OFF) `+query).Scan(&plan))
		require.Contains(t, plan, "Aggregate", "the plan: %s", plan)

		f.unchecked(t)
		var n int64
		err = c.QueryRow(ctx, query).Scan(&n)
		if err != nil {
			require.Equal(t, "55000", sqlState(err), "%v", err)
			require.Contains(t, err.Error(), "a parallel worker may not check it")
			require.Nil(t, f.startedAt(t), "nothing recorded")
			t.Log("a worker found the node unchecked")
			_, err = c.Exec(ctx, `INSERT INTO item (v) VALUES (1)`)
			require.NoError(t, err)
		} else {
			t.Log("no worker launched: the leader checked the node")
		}
		f.recorded(t, "the leader")
		require.NoError(t, c.QueryRow(ctx, query).Scan(&n))
		require.EqualValues(t, 100000, n)
	})
}

// TestExtensionRefusedOnAMeshNode (issue #40): ulid_flake_next() makes
// plain-layout IDs, which ignore the SID, so on a node with a SID it is
// refused (55U04) in every statement, as ulid_flake() is, once the node
// was checked too: in the default and in an explicit call, for a role
// that is not the install's owner. Without a SID again, it makes IDs.
func TestExtensionRefusedOnAMeshNode(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		f := newVerifyFixture(t, db)
		app := connectAs(t, db, f.app)
		_, err := app.Exec(ctx, `INSERT INTO item (v) VALUES (0)`)
		require.NoError(t, err)
		f.exec(t, `SELECT ulid_flake_set_sid(4)`)
		f.recorded(t, "ulid_flake_set_sid")
		for _, q := range []string{`INSERT INTO item (v) VALUES (1)`, `SELECT ulid_flake_next(nextval('ulid_flake_seq'))`} {
			_, err := app.Exec(ctx, q)
			require.Equal(t, "55U04", sqlState(err), "%s: %v", q, err)
			require.Contains(t, err.Error(), "ulid_flake mesh: ulid_flake_next() ignores the node's SID", q)
		}
		f.exec(t, `SELECT ulid_flake_set_sid(NULL)`)
		_, err = app.Exec(ctx, `INSERT INTO item (v) VALUES (2)`)
		require.NoError(t, err, "no SID: a node alone")
	})
}
