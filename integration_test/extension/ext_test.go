package extension_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

const (
	p    = 1<<20 - 1 // the modulus of the sequence bits
	next = `ulid_flake_next(nextval('ulid_flake_seq'))`
)

// low is what ulid_flake() and ulid_flake_next put in an ID's low 20 bits
// for sequence value s and offset off.
func low(s, off int64) int64 {
	x := (s%p + off) % p
	return x * 32 % p
}

func offsetOf(t *testing.T, ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) int64 {
	t.Helper()
	var off int64
	require.NoError(t, q.QueryRow(ctx, `SELECT "offset" FROM ulid_flake_state`).Scan(&off))
	return off
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestExtensionBitCompatible: for the same sequence value, ulid_flake_next
// and ulid_flake() put the same 20 low bits in the ID, computed as the
// formula of migration 004 (over the sequence's CYCLE too); the time is the
// server's clock, read by Go's flake under the default epoch.
func TestExtensionBitCompatible(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		off := offsetOf(t, ctx, db)

		// Per row: ulid_flake() draws s, ulid_flake_next(currval()) gets the same s.
		// Start near MAXVALUE so that the sequence cycles half-way.
		_, err := db.Exec(ctx, `SELECT setval('ulid_flake_seq', 9223372036854775800 - 5000)`)
		require.NoError(t, err)
		rows, err := db.Query(ctx, `SELECT ulid_flake(), currval('ulid_flake_seq'), ulid_flake_next(currval('ulid_flake_seq'))
			FROM generate_series(1, 20000)`)
		require.NoError(t, err)
		n, cycled := 0, false
		for rows.Next() {
			var a, s, b int64
			require.NoError(t, rows.Scan(&a, &s, &b))
			cycled = cycled || s < 5000
			require.Equal(t, a&(1<<20-1), b&(1<<20-1), "s=%d", s)
			require.Equal(t, low(s, off), b&(1<<20-1), "s=%d", s)
			require.LessOrEqual(t, a>>20, b>>20, "s=%d", s)
			n++
		}
		require.NoError(t, rows.Err())
		require.Equal(t, 20000, n)
		require.True(t, cycled, "the sequence did not cycle")

		// Large and negative arguments: the same arithmetic, never a negative ID.
		for _, s := range []int64{1, p - 1, p, p + 1, 1 << 40, 9223372036854775807, 0, -1, -p, -9223372036854775808} {
			var id int64
			require.NoError(t, db.QueryRow(ctx, `SELECT ulid_flake_next($1)`, s).Scan(&id))
			m := s % p
			if m < 0 {
				m += p
			}
			require.Equal(t, low(m, off), id&(1<<20-1), "s=%d", s)
			require.Positive(t, id)
		}

		checkTime(t, db, flake.DefaultEpoch())
	})
}

// checkTime: an ID of ulid_flake_next, read by Go under epoch e, has the
// server's time, as ulid_flake_time reads it, and ulid_flake() agrees.
func checkTime(t *testing.T, conn interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, e flake.Epoch) {
	t.Helper()
	ctx := context.Background()
	var t0, t1 time.Time
	var id, sqlID int64
	var sqlTime time.Time
	require.NoError(t, conn.QueryRow(ctx, `SELECT clock_timestamp(), `+next+`, clock_timestamp(), ulid_flake()`).
		Scan(&t0, &id, &t1, &sqlID))
	require.NoError(t, conn.QueryRow(ctx, `SELECT ulid_flake_time($1)`, id).Scan(&sqlTime))
	got := e.Time(flake.ID(id))
	require.False(t, got.Before(t0.Truncate(time.Millisecond)), "ID time %v before the clock %v", got, t0)
	require.False(t, got.After(t1), "ID time %v after the clock %v", got, t1)
	require.True(t, got.Equal(sqlTime), "Go reads %v, ulid_flake_time %v", got, sqlTime)
	require.LessOrEqual(t, id>>20, sqlID>>20)
	require.False(t, e.Time(flake.ID(sqlID)).Before(t0.Truncate(time.Millisecond)), "ulid_flake() time %v before the clock %v", e.Time(flake.ID(sqlID)), t0)
}

// TestExtensionEpoch: from version 5 on, the extension uses the epoch
// fixed at install, as ulid_flake() does: ulid_flake_set_epoch changes it
// for sessions that already made IDs, and the setting ulid_flake.epoch_ms
// (SET, a bad value, ALTER DATABASE) is not read. On a version 4 schema,
// both follow the setting at every call, as before.
func TestExtensionEpoch(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		e2020, err := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
		require.NoError(t, err)
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		checkTime(t, conn, flake.DefaultEpoch())

		// Version 7: ulid_flake_set_epoch, from another session.
		_, err = db.Exec(ctx, `SELECT ulid_flake_set_epoch($1::bigint)`, e2020.UnixMilli())
		require.Equal(t, "55000", sqlState(err), "a new epoch once IDs were made: %v", err)
		_, err = db.Exec(ctx, `SELECT ulid_flake_set_epoch($1::bigint, force => true)`, e2020.UnixMilli())
		require.NoError(t, err)
		checkTime(t, conn, e2020)
		for _, set := range []string{"abc", "1704067200000"} {
			_, err = conn.Exec(ctx, `SET ulid_flake.epoch_ms = '`+set+`'`)
			require.NoError(t, err)
			checkTime(t, conn, e2020)
		}
		_, err = db.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s SET ulid_flake.epoch_ms = '1704067200000'`, db.Name))
		require.NoError(t, err)
		fresh, err := pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		checkTime(t, fresh, e2020)
		require.NoError(t, fresh.Close(ctx))
		_, err = db.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s RESET ulid_flake.epoch_ms`, db.Name))
		require.NoError(t, err)

		// An epoch after the clock: outside the range, 23514 from both.
		_, err = db.Exec(ctx, `SELECT ulid_flake_set_epoch($1::bigint, force => true)`, time.Now().Add(24*time.Hour).UnixMilli())
		require.NoError(t, err)
		_, err = conn.Exec(ctx, `SELECT `+next)
		require.Equal(t, "23514", sqlState(err), "%v", err)
		_, err = conn.Exec(ctx, `SELECT ulid_flake()`)
		require.Equal(t, "23514", sqlState(err), "%v", err)
		_, err = db.Exec(ctx, `SELECT ulid_flake_set_epoch(1704067200000, force => true)`)
		require.NoError(t, err)

		// Version 4: the setting, at every call (SET, RESET, a bad value,
		// ALTER DATABASE read by a new session before the module loads).
		sdb, err := sql.Open("pgx", db.URL)
		require.NoError(t, err)
		defer sdb.Close()
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		// Version 1.0 of the extension reads the setting alone: version 5
		// refuses to install beside it.
		_, err = db.Exec(ctx, `DROP EXTENSION ulid_flake_ext; CREATE EXTENSION ulid_flake_ext VERSION '1.0'`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrEpoch)
		require.Equal(t, "55000", sqlState(err), "%v", err)
		require.ErrorContains(t, err, "ALTER EXTENSION ulid_flake_ext UPDATE")
		_, err = db.Exec(ctx, `ALTER EXTENSION ulid_flake_ext UPDATE`)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, `RESET ulid_flake.epoch_ms`)
		require.NoError(t, err)
		checkTime(t, conn, flake.DefaultEpoch())
		_, err = conn.Exec(ctx, fmt.Sprintf(`SET ulid_flake.epoch_ms = '%d'`, e2020.UnixMilli()))
		require.NoError(t, err)
		checkTime(t, conn, e2020)
		_, err = conn.Exec(ctx, `SET ulid_flake.epoch_ms = ' +1704067200000 '`) // spaces and a sign, as ulid_flake() takes
		require.NoError(t, err)
		checkTime(t, conn, flake.DefaultEpoch())
		for _, bad := range []string{"abc", " ", "1e12", "1234567890123456789"} {
			_, err = conn.Exec(ctx, `SET ulid_flake.epoch_ms = '`+bad+`'`)
			require.NoError(t, err)
			_, err = conn.Exec(ctx, `SELECT `+next)
			require.Equal(t, "23514", sqlState(err), "ulid_flake_next under %q: %v", bad, err)
			_, err = conn.Exec(ctx, `SELECT ulid_flake()`)
			require.Equal(t, "23514", sqlState(err), "ulid_flake under %q: %v", bad, err)
		}
		_, err = conn.Exec(ctx, `RESET ulid_flake.epoch_ms`)
		require.NoError(t, err)
		_, err = db.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s SET ulid_flake.epoch_ms = '%d'`, db.Name, e2020.UnixMilli()))
		require.NoError(t, err)
		fresh, err = pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		checkTime(t, fresh, e2020)

		// Back to version 5, in a session where the setting holds 2020:
		// the install keeps it as the epoch.
		_, err = migrations.Migrate(ctx, stdlib.OpenDB(*fresh.Config()))
		require.NoError(t, err)
		var kept int64
		require.NoError(t, fresh.QueryRow(ctx, `SELECT ulid_flake_epoch_ms()`).Scan(&kept))
		require.Equal(t, e2020.UnixMilli(), kept)
		require.NoError(t, fresh.Close(ctx))
		_, err = conn.Exec(ctx, `SET ulid_flake.epoch_ms = 'abc'`)
		require.NoError(t, err)
		checkTime(t, conn, e2020)

		// The update (1.0 to 1.2) calls a symbol only the 1.2 module has;
		// 1.0 beside version 5 (a restore onto a server with the old
		// package) is ErrEpoch.
		var symbol string
		require.NoError(t, db.QueryRow(ctx, `SELECT prosrc FROM pg_proc WHERE oid = 'ulid_flake_next(bigint)'::regprocedure`).Scan(&symbol))
		require.Equal(t, "ulid_flake_next_1_2", symbol)
		_, err = db.Exec(ctx, `DROP EXTENSION ulid_flake_ext; CREATE EXTENSION ulid_flake_ext VERSION '1.0'`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrEpoch)
		_, err = db.Exec(ctx, `ALTER EXTENSION ulid_flake_ext UPDATE`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
	})
}

// TestExtensionFollowsOffset: a session that has made IDs sees the offset
// that ulid_flake_build() (what ulid_flake_check_node() runs on a clone)
// draws in another session, as ulid_flake() does, from its next statement.
func TestExtensionFollowsOffset(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		a, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer a.Release()
		b, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer b.Release()
		for _, newOff := range []int64{12345, 0, p - 1} {
			_, err := b.Exec(ctx, `SELECT ulid_flake_build($1)`, newOff)
			require.NoError(t, err)
			var id, s, sqlID int64
			require.NoError(t, a.QueryRow(ctx, `SELECT `+next+`, currval('ulid_flake_seq'), ulid_flake()`).Scan(&id, &s, &sqlID))
			require.Equal(t, low(s, newOff), id&(1<<20-1), "offset %d", newOff)
			require.Equal(t, low(s+1, newOff), sqlID&(1<<20-1), "offset %d", newOff)
		}
	})
}

// TestExtensionUniqueAcrossBackends: 12 backends insert at once into one
// primary key, by COPY with DEFAULT ulid_flake_next(nextval(...)), by
// INSERT … SELECT, and beside them sessions using ulid_flake() (a default
// switched half-way) and blocks from ulid_flake_block (package blocks): no
// duplicate key, every row there. Then a parallel
// INSERT … SELECT under forced parallel settings: nextval() keeps the plan
// serial, and every row gets its own ID.
func TestExtensionUniqueAcrossBackends(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		_, err := db.Exec(ctx, `CREATE UNLOGGED TABLE u (id bigint PRIMARY KEY DEFAULT `+next+`, w int, v int)`)
		require.NoError(t, err)
		const workers, rounds, rows = 12, 5, 4000
		itest.RunWorkers(t, workers, func(w int) error {
			src := make([][]any, rows)
			for i := range src {
				src[i] = []any{int32(w), int32(i)}
			}
			for r := range rounds {
				var err error
				switch w % 4 {
				case 0:
					_, err = db.CopyFrom(ctx, pgx.Identifier{"u"}, []string{"w", "v"}, pgx.CopyFromRows(src))
				case 1:
					_, err = db.Exec(ctx, `INSERT INTO u (w, v) SELECT $1, g FROM generate_series(1, $2) g`, w, rows)
				case 2:
					_, err = db.Exec(ctx, `INSERT INTO u (id, w, v) SELECT ulid_flake(), $1, g FROM generate_series(1, $2) g`, w, rows)
				default: // a block of IDs, as package blocks reserves them
					_, err = db.Exec(ctx, `INSERT INTO u (id, w, v) SELECT b, $1, 0 FROM unnest(ulid_flake_block($2)) b`, w, rows)
				}
				if err != nil {
					return fmt.Errorf("worker %d round %d: %w", w, r, err)
				}
			}
			return nil
		})
		var n, distinct int64
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM u`).Scan(&n, &distinct))
		require.EqualValues(t, workers*rounds*rows, n)
		require.Equal(t, n, distinct)

		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, `CREATE UNLOGGED TABLE src AS SELECT g FROM generate_series(1, 200000) g;
			ANALYZE src;
			SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
			SET max_parallel_workers_per_gather = 4`)
		require.NoError(t, err)
		force := "debug_parallel_query" // force_parallel_mode before PostgreSQL 16
		if db.Server.Major < 16 {
			force = "force_parallel_mode"
		}
		_, err = conn.Exec(ctx, `SET `+force+` = on`)
		require.NoError(t, err)
		// The argument, nextval(), is PARALLEL UNSAFE: the plan is serial.
		rowsPlan, err := conn.Query(ctx, `EXPLAIN (COSTS OFF) INSERT INTO u (w, v) SELECT -1, g FROM src`)
		require.NoError(t, err)
		for rowsPlan.Next() {
			var line string
			require.NoError(t, rowsPlan.Scan(&line))
			require.NotContains(t, line, "Gather", "plan: %s", line)
		}
		require.NoError(t, rowsPlan.Err())
		_, err = conn.Exec(ctx, `INSERT INTO u (w, v) SELECT -1, g FROM src`)
		require.NoError(t, err)
		// With an argument that is not volatile it runs in workers (PARALLEL
		// SAFE), reading the offset there.
		planRows, err := conn.Query(ctx, `EXPLAIN (COSTS OFF) SELECT count(ulid_flake_next(g)) FROM src`)
		require.NoError(t, err)
		workerPlan, err := pgx.CollectRows(planRows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Contains(t, strings.Join(workerPlan, "\n"), "Gather")
		_, err = conn.Exec(ctx, `SELECT count(ulid_flake_next(g)) FROM src`)
		require.NoError(t, err)
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM u`).Scan(&n, &distinct))
		require.EqualValues(t, workers*rounds*rows+200000, n)
		require.Equal(t, n, distinct)
	})
}

// TestExtensionEpochDuringUpgrade: a session that calls ulid_flake_next
// while migration 5 is installing (its ALTER TABLE holds the state's
// lock) waits, and then, and on every later call, uses the epoch version
// 5 fixed, not its own setting, as ulid_flake() does.
func TestExtensionEpochDuringUpgrade(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		sdb, err := sql.Open("pgx", db.URL)
		require.NoError(t, err)
		defer sdb.Close()
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		all, err := migrations.All()
		require.NoError(t, err)

		installer, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer installer.Release()
		caller, err := pgx.Connect(ctx, db.URL+"&options=-c%20ulid_flake.epoch_ms%3D1600000000000")
		require.NoError(t, err)
		defer caller.Close(ctx)
		var own string
		require.NoError(t, caller.QueryRow(ctx, `SELECT current_setting('ulid_flake.epoch_ms')`).Scan(&own))
		require.Equal(t, "1600000000000", own, "the caller's own epoch setting, which version 5 must not read")
		var id int64
		tx, err := installer.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, all[4].Up)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- caller.QueryRow(ctx, `SELECT `+next).Scan(&id) }()
		// The caller's first call waits for the install's lock.
		for waiting := false; !waiting; {
			select {
			case err := <-done:
				t.Fatalf("ulid_flake_next returned while the install held the lock: %v", err)
			default:
			}
			require.NoError(t, db.QueryRow(ctx, `SELECT count(*) > 0 FROM pg_stat_activity
				WHERE pid = $1 AND wait_event_type = 'Lock'`, caller.PgConn().PID()).Scan(&waiting))
		}
		_, err = tx.Exec(ctx, `INSERT INTO ulid_flake_migrations (version, name) VALUES (5, $1)`, all[4].Name)
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
		require.NoError(t, <-done)
		for range 2 {
			checkTime(t, caller, flake.DefaultEpoch())
		}
	})
}
