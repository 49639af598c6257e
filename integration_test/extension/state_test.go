package extension_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

type queryer interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}

// checkState: an ID of ulid_flake_next has the low bits of offset off and,
// read under epoch e, the server's time.
func checkState(t *testing.T, q queryer, off int64, e flake.Epoch) {
	t.Helper()
	var t0, t1 time.Time
	var id, s int64
	require.NoError(t, q.QueryRow(context.Background(), `SELECT clock_timestamp(), `+next+`, currval('ulid_flake_seq'), clock_timestamp()`).
		Scan(&t0, &id, &s, &t1))
	require.Equal(t, low(s, off), id&(1<<20-1), "want offset %d", off)
	got := e.Time(flake.ID(id))
	require.False(t, got.Before(t0.Truncate(time.Millisecond)) || got.After(t1),
		"ID time %v under epoch %v is not between %v and %v", got, e.Time(0), t0, t1)
}

// TestExtensionFollowsState: every statement uses the state as it reads it
// then, not what the session read before. A change made in a transaction
// is used by that transaction's later statements, and forgotten when it
// rolls back (ROLLBACK, ROLLBACK TO SAVEPOINT): an UPDATE of the offset
// and epoch, and an ALTER TABLE that drops epoch_ms (the setting's epoch
// then applies, as on version 4); also within one query string, whose
// statements share a start. A direct UPDATE committed by another session
// is used from the next statement, in a transaction block too.
func TestExtensionFollowsState(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		e2020, err := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
		require.NoError(t, err)
		def := flake.DefaultEpoch()
		a, err := pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		defer a.Close(ctx)
		exec := func(c interface {
			Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
		}, q string) {
			t.Helper()
			_, err := c.Exec(ctx, q)
			require.NoError(t, err, q)
		}
		off := offsetOf(t, ctx, a)
		other := (off + 777) % p
		checkState(t, a, off, def)

		// An UPDATE in a transaction, rolled back.
		tx, err := a.Begin(ctx)
		require.NoError(t, err)
		exec(tx, fmt.Sprintf(`UPDATE ulid_flake_state SET "offset" = %d, epoch_ms = %d`, other, e2020.UnixMilli()))
		checkState(t, tx, other, e2020)
		checkState(t, tx, other, e2020)
		require.NoError(t, tx.Rollback(ctx))
		checkState(t, a, off, def)

		// The same, to a savepoint.
		tx, err = a.Begin(ctx)
		require.NoError(t, err)
		checkState(t, tx, off, def)
		exec(tx, `SAVEPOINT s`)
		exec(tx, fmt.Sprintf(`UPDATE ulid_flake_state SET "offset" = %d, epoch_ms = %d`, other, e2020.UnixMilli()))
		checkState(t, tx, other, e2020)
		exec(tx, `ROLLBACK TO SAVEPOINT s`)
		checkState(t, tx, off, def)
		require.NoError(t, tx.Commit(ctx))
		checkState(t, a, off, def)

		// An ALTER TABLE in a transaction, rolled back: without epoch_ms the
		// setting gives the epoch; with it back, the setting is not read.
		tx, err = a.Begin(ctx)
		require.NoError(t, err)
		exec(tx, `ALTER TABLE ulid_flake_state DROP COLUMN epoch_ms`)
		exec(tx, fmt.Sprintf(`SET LOCAL ulid_flake.epoch_ms = '%d'`, e2020.UnixMilli()))
		checkState(t, tx, off, e2020)
		require.NoError(t, tx.Rollback(ctx))
		exec(a, fmt.Sprintf(`SET ulid_flake.epoch_ms = '%d'`, e2020.UnixMilli()))
		checkState(t, a, off, def)
		exec(a, `RESET ulid_flake.epoch_ms`)

		// In one query string, where the statements share a start and
		// (without a write) a command id: the rollback is what counts.
		for _, rollback := range []string{"ROLLBACK TO SAVEPOINT s", "ROLLBACK; BEGIN"} {
			rs, err := a.PgConn().Exec(ctx, fmt.Sprintf(`BEGIN; SAVEPOINT s; UPDATE ulid_flake_state SET "offset" = %d;
				SELECT %s, currval('ulid_flake_seq'); %s; SELECT %s, currval('ulid_flake_seq'); COMMIT`, other, next, rollback, next)).ReadAll()
			require.NoError(t, err, rollback)
			var got [][2]int64
			for _, r := range rs {
				if len(r.Rows) == 1 {
					var v [2]int64
					for i := range v {
						v[i], err = strconv.ParseInt(string(r.Rows[0][i]), 10, 64)
						require.NoError(t, err)
					}
					got = append(got, v)
				}
			}
			require.Len(t, got, 2)
			require.Equal(t, low(got[0][1], other), got[0][0]&(1<<20-1), "%s: before it", rollback)
			require.Equal(t, low(got[1][1], off), got[1][0]&(1<<20-1), "%s: after it", rollback)
		}
		checkState(t, a, off, def)

		// Another session's committed UPDATE, seen at the next statement:
		// in autocommit, and inside a transaction block.
		exec(db, fmt.Sprintf(`UPDATE ulid_flake_state SET "offset" = %d`, other))
		checkState(t, a, other, def)
		tx, err = a.Begin(ctx)
		require.NoError(t, err)
		checkState(t, tx, other, def)
		exec(db, fmt.Sprintf(`UPDATE ulid_flake_state SET "offset" = %d`, off))
		checkState(t, tx, off, def)
		require.NoError(t, tx.Commit(ctx))
		checkState(t, a, off, def)
	})
}

// TestExtensionReadsStatePerStatement: the state is read once per
// statement, not per row (the module says so at DEBUG1): a COPY of a
// million rows and an INSERT … SELECT read it once, two queries twice;
// the statements of one query string once, and again after a ROLLBACK TO
// SAVEPOINT among them; a parallel query at most once in the leader and
// once in each worker.
func TestExtensionReadsStatePerStatement(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		cfg, err := pgx.ParseConfig(db.URL)
		require.NoError(t, err)
		var reads atomic.Int64
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			if strings.HasPrefix(n.Message, "ulid_flake_next: read ") {
				reads.Add(1)
			}
		}
		c, err := pgx.ConnectConfig(ctx, cfg)
		require.NoError(t, err)
		defer c.Close(ctx)
		exec := func(q string) {
			t.Helper()
			_, err := c.Exec(ctx, q)
			require.NoError(t, err, q)
		}
		exec(`CREATE UNLOGGED TABLE big (id bigint DEFAULT ` + next + `, k int)`)
		exec(`SET client_min_messages = debug1`)
		counted := func(what string, want int64, fn func()) {
			t.Helper()
			reads.Store(0)
			fn()
			require.Equal(t, want, reads.Load(), "reads of the state by %s", what)
		}

		const million = 1_000_000
		counted("a COPY of a million rows", 1, func() {
			n, err := c.CopyFrom(ctx, pgx.Identifier{"big"}, []string{"k"}, pgx.CopyFromFunc(func() func() ([]any, error) {
				i := 0
				return func() ([]any, error) {
					if i == million {
						return nil, nil
					}
					i++
					return []any{int32(i)}, nil
				}
			}()))
			require.NoError(t, err)
			require.EqualValues(t, million, n)
		})
		counted("INSERT … SELECT", 1, func() { exec(`INSERT INTO big (k) SELECT g FROM generate_series(1, 200000) g`) })
		counted("two statements", 2, func() {
			exec(`SELECT ` + next + `, ` + next)
			exec(`SELECT ` + next)
		})
		// One query string: its statements share a start, and read once,
		// but a rolled-back savepoint is forgotten.
		counted("a savepoint rolled back", 2, func() {
			exec(`BEGIN; SAVEPOINT s; SELECT ` + next + `; SELECT ` + next + `; ROLLBACK TO SAVEPOINT s; SELECT ` + next + `; COMMIT`)
		})
		var n, d int64
		require.NoError(t, c.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM big`).Scan(&n, &d))
		require.EqualValues(t, million+200000, n)
		require.Equal(t, n, d)

		// A parallel query (a constant argument: PARALLEL SAFE).
		exec(`CREATE UNLOGGED TABLE src AS SELECT g FROM generate_series(1, 200000) g; ANALYZE src`)
		exec(`SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
			SET max_parallel_workers_per_gather = 2`)
		reads.Store(0)
		var count int64
		require.NoError(t, c.QueryRow(ctx, `SELECT count(ulid_flake_next(g)) FROM src`).Scan(&count))
		require.EqualValues(t, 200000, count)
		t.Logf("a parallel query read the state %d times", reads.Load())
		require.GreaterOrEqual(t, reads.Load(), int64(1))
		require.LessOrEqual(t, reads.Load(), int64(3), "reads of the state by a parallel query with 2 workers")
	})
}
