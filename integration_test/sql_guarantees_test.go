package integration_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// hostileSchemas are schema names that end comments, literals, dollar-quoted
// bodies or statements if pasted unquoted, plus Unicode and 63 bytes.
var hostileSchemas = []string{
	`a$body$b`, `"50%off"`, `it's`, "new\nline", `x--y`, `/*c`, `$$`, `$tag$`, `back\slash`,
	`x';END IF;DROP TABLE victim;--`, "ünï🦀", strings.Repeat("é", 31) + "x",
}

// catalogBesides lists every object outside the given schema, with its definition.
func catalogBesides(t *testing.T, ctx context.Context, db *sql.DB, except string) string {
	t.Helper()
	var s string
	require.NoError(t, db.QueryRowContext(ctx, `
		SELECT string_agg(x, E'\n' ORDER BY x) FROM (
			SELECT n.nspname || '.' || c.relname || ':' || c.relkind::text || ':' || coalesce(c.relacl::text, '') AS x
				FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ($1, 'pg_toast')
			UNION ALL SELECT n.nspname || '.' || p.proname || ':' || md5(p.prosrc) || ':' || p.proparallel::text
				FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname NOT IN ($1, 'pg_toast')
			UNION ALL SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname <> $1
			UNION ALL SELECT 'role ' || rolname || rolsuper FROM pg_roles) s`, except).Scan(&s))
	return s
}

// TestInstallIntoHostileSchemas installs into schemas with hostile names
// and checks that the functions work and that nothing else changed.
func TestInstallIntoHostileSchemas(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := stdDB(t, db)
		_, err := sdb.ExecContext(ctx, `CREATE TABLE victim (x int)`)
		require.NoError(t, err)
		for _, name := range hostileSchemas {
			require.LessOrEqual(t, len(name), 63)
			q := `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
			_, err := sdb.ExecContext(ctx, `CREATE SCHEMA `+q)
			require.NoError(t, err)
			before := catalogBesides(t, ctx, sdb, name)
			var out strings.Builder
			_, err = migrations.Migrate(ctx, sdb, migrations.Schema(name), migrations.Table(name), migrations.DryRun(&out))
			require.NoError(t, err, name)
			require.Equal(t, before, catalogBesides(t, ctx, sdb, name), "a dry run changes nothing")
			steps, err := migrations.Migrate(ctx, sdb, migrations.Schema(name), migrations.Table(name))
			require.NoError(t, err, name)
			require.Len(t, steps, migrations.Latest())
			require.Equal(t, before, catalogBesides(t, ctx, sdb, name), "only %q changed", name)
			var id, low, high int64
			var text string
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT `+q+`.ulid_flake(), `+q+`.ulid_flake_scalable(3),
				`+q+`.ulid_flake_encode(42), `+q+`.ulid_flake_min(now()), `+q+`.ulid_flake_max(now())`).Scan(&id, &id, &text, &low, &high), name)
			require.Equal(t, "000000000001A", text)
			require.Less(t, low, high)
			// The dry run's SQL, run as a script, does the same from scratch.
			_, err = migrations.Migrate(ctx, sdb, migrations.Schema(name), migrations.Table(name), migrations.To(0))
			require.NoError(t, err, name)
			_, err = sdb.ExecContext(ctx, out.String())
			require.NoError(t, err, "dry run SQL for %q", name)
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT `+q+`.ulid_flake()`).Scan(&id), name)
			require.Equal(t, before, catalogBesides(t, ctx, sdb, name), "only %q changed", name)
		}
	})
}

// TestMigrateConcurrently runs 8 callers at once, on separate connections,
// up on a fresh schema, then Down, To and up on a migrated one.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := stdDB(t, db)
		sdb.SetMaxOpenConns(16)
		_, err := sdb.ExecContext(ctx, `CREATE SCHEMA "fresh one"`)
		require.NoError(t, err)
		latest := migrations.Latest()
		for i, tc := range []struct {
			opts []migrations.Option
			want int // version afterwards; -1: between 0 and latest-1
		}{
			{[]migrations.Option{migrations.Schema("fresh one")}, latest},
			{nil, latest},
			{[]migrations.Option{migrations.Down()}, -1},
			{[]migrations.Option{migrations.To(1)}, 1},
			{[]migrations.Option{migrations.To(0)}, 0},
			{nil, latest},
			{[]migrations.Option{migrations.To(1)}, 1},
			{nil, latest},
		} {
			total := make([]int, 8)
			runWorkers(t, 8, func(w int) error {
				steps, err := migrations.Migrate(ctx, sdb, tc.opts...)
				total[w] = len(steps)
				return err
			})
			schema, table := "public", `public.ulid_flake_migrations`
			if i == 0 {
				schema, table = "fresh one", `"fresh one".ulid_flake_migrations`
			}
			var v int
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM `+table).Scan(&v))
			if tc.want >= 0 {
				require.Equal(t, tc.want, v)
			} else {
				require.Less(t, v, latest)
			}
			var fns int
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
				WHERE n.nspname = $1 AND proname = 'ulid_flake'`, schema).Scan(&fns))
			require.Equal(t, v > 0, fns == 1, "the functions exist as the version table says")
		}
	})
}

// TestUpgradeEqualsFreshInstall: 001 installed then upgraded ends in the
// same objects as a fresh install, and 003's down restores 001's.
func TestUpgradeEqualsFreshInstall(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := stdDB(t, db)
		defs := func(schema string) string {
			var s string
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT string_agg(x, E'\n' ORDER BY x) FROM (
				SELECT regexp_replace(regexp_replace(replace(pg_get_functiondef(p.oid), n.nspname, 'S'), '\+ [0-9]+\)', '+ N)', 'g'), '\s+', ' ', 'g') AS x
					FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
				UNION ALL SELECT t.typname || ':' || pg_get_constraintdef(c.oid) || ':' || CASE c.contype WHEN 'c' THEN c.conname ELSE '' END FROM pg_constraint c
					JOIN pg_type t ON t.oid = c.contypid JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = $1
				UNION ALL SELECT sequencename || ':' || min_value || cycle FROM pg_sequences WHERE schemaname = $1) s`, schema).Scan(&s))
			return s
		}
		for _, s := range []string{"fresh", "upgraded"} {
			_, err := sdb.ExecContext(ctx, `CREATE SCHEMA `+s)
			require.NoError(t, err)
		}
		_, err := migrations.Migrate(ctx, sdb, migrations.Schema("fresh"))
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.Schema("upgraded"), migrations.To(1))
		require.NoError(t, err)
		v1 := defs("upgraded")
		var id1 int64
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT upgraded.ulid_flake()`).Scan(&id1))
		_, err = migrations.Migrate(ctx, sdb, migrations.Schema("upgraded"))
		require.NoError(t, err)
		require.Equal(t, defs("fresh"), defs("upgraded"))
		// The offset is kept: the next ID follows the last one's low bits.
		var id2 int64
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT upgraded.ulid_flake()`).Scan(&id2))
		require.Equal(t, (id1+1)&0xFFFFF, id2&0xFFFFF)
		_, err = migrations.Migrate(ctx, sdb, migrations.Schema("upgraded"), migrations.To(1))
		require.NoError(t, err)
		require.Equal(t, v1, defs("upgraded"))
	})
}

// TestGeneratorsUnderParallelPlans: CTAS and SELECTs with parallel plans
// forced, and a CTAS over a table big enough for a parallel plan.
func TestGeneratorsUnderParallelPlans(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		force := "debug_parallel_query"
		if db.Server.Major < 16 {
			force = "force_parallel_mode"
		}
		for _, q := range []string{
			`CREATE TABLE big AS SELECT g AS x FROM generate_series(1, 300000) g`,
			`ANALYZE big`,
			`SET max_parallel_workers_per_gather = 2`,
			`SET parallel_setup_cost = 0`, `SET parallel_tuple_cost = 0`, `SET min_parallel_table_scan_size = 0`,
			`CREATE TABLE c1 AS SELECT ulid_flake() AS id, x FROM big`,
			`CREATE TABLE c2 AS SELECT ulid_flake_scalable(1) AS id, x FROM big`,
			`SET ` + force + ` = on`,
			`CREATE TABLE c3 AS SELECT ulid_flake() AS id FROM generate_series(1, 1000)`,
			`SELECT count(DISTINCT ulid_flake()) FROM big WHERE x % 3 = 0`,
		} {
			_, err := conn.Exec(ctx, q)
			require.NoError(t, err, q)
		}
		var n, d int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM (SELECT id FROM c1 UNION ALL SELECT id FROM c2) s`).Scan(&n, &d))
		require.Equal(t, 600000, n)
		require.Equal(t, n, d)
		var unsafe int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_proc WHERE proname IN ('ulid_flake', 'ulid_flake_scalable') AND proparallel = 'u'`).Scan(&unsafe))
		require.Equal(t, 2, unsafe)
	})
}

// TestGeneratorWrapsClockStepsOverflow checks the exact guarantees: the low
// bits are (sequence + offset) mod 2^20, so within any 2^20 consecutive
// sequence values the IDs differ even when the clock steps back (simulated
// by moving ulid_flake.epoch_ms forward), and the sequence's last values
// before CYCLE neither overflow nor repeat.
func TestGeneratorWrapsClockStepsOverflow(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		// Clock steps back by an hour between two halves: no repeat.
		var n, d int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM (
			SELECT ulid_flake() AS id FROM generate_series(1, 50000)
			UNION ALL SELECT id FROM (SELECT set_config('ulid_flake.epoch_ms', '1704070800000', false)) s,
				LATERAL (SELECT ulid_flake() AS id FROM generate_series(1, 50000)) g) u`).Scan(&n, &d))
		require.Equal(t, 100000, n)
		require.Equal(t, n, d)
		_, err = conn.Exec(ctx, `RESET ulid_flake.epoch_ms`)
		require.NoError(t, err)
		// Near the sequence's end: no overflow, and the low bits run on
		// through the cycle without a repeat.
		_, err = conn.Exec(ctx, `SELECT setval('ulid_flake_seq', 9223372036854775807 - 5)`)
		require.NoError(t, err)
		rows, err := conn.Query(ctx, `SELECT ulid_flake() & 1048575 FROM generate_series(1, 12)`)
		require.NoError(t, err)
		seen := map[int64]bool{}
		for rows.Next() {
			var low int64
			require.NoError(t, rows.Scan(&low))
			require.False(t, seen[low], "low bits %d repeat across the cycle", low)
			seen[low] = true
		}
		require.NoError(t, rows.Err())
		_, err = conn.Exec(ctx, `SELECT setval('ulid_flake_seq', 9223372036854775807 - 5)`)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, `SELECT ulid_flake_scalable(1) FROM generate_series(1, 12)`)
		require.NoError(t, err)
	})
}

// TestSQLErrorsNameTheCause checks the messages and SQLSTATEs the README lists.
func TestSQLErrorsNameTheCause(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, tc := range []struct{ set, q, code, want string }{
			{"SET ulid_flake.epoch_ms = 'soon'", "SELECT ulid_flake()", "23514", "ulid_flake.epoch_ms must be an integer"},
			{"SET ulid_flake.epoch_ms = 'soon'", "SELECT ulid_flake_time(1)", "23514", "ulid_flake.epoch_ms must be an integer"},
			{"SET ulid_flake.epoch_ms = 'soon'", "SELECT ulid_flake_min(now())", "23514", "ulid_flake.epoch_ms must be an integer"},
			{"SET ulid_flake.epoch_ms = '99999999999999999999'", "SELECT ulid_flake()", "23514", "ulid_flake.epoch_ms must be an integer"},
			{"SET ulid_flake.sid = 'x'", "SELECT ulid_flake_scalable()", "23514", "ulid_flake.sid must be an integer in 0..31"},
			{"SET ulid_flake.sid = '32'", "SELECT ulid_flake_scalable()", "23514", "SID not in 0..31"},
			{"RESET ulid_flake.sid", "SELECT ulid_flake_scalable()", "23514", "SET ulid_flake.sid"},
			{"SET ulid_flake.epoch_ms = '4102444800000'", "SELECT ulid_flake()", "23514", "clock outside the epoch range"},
			{"RESET ALL", "SELECT ulid_flake_min('infinity')", "22003", "time out of range: infinity"},
			{"RESET ALL", "SELECT ulid_flake_max('-infinity')", "22003", "time out of range: -infinity"},
			{"RESET ALL", "SELECT ulid_flake_min('2000-01-01')", "22003", "time out of range"},
		} {
			conn, err := db.Acquire(ctx)
			require.NoError(t, err)
			_, err = conn.Exec(ctx, "RESET ALL")
			require.NoError(t, err)
			_, err = conn.Exec(ctx, tc.set)
			require.NoError(t, err)
			_, err = conn.Exec(ctx, tc.q)
			conn.Release()
			var pe *pgconn.PgError
			require.ErrorAs(t, err, &pe, "%s; %s", tc.set, tc.q)
			require.Equal(t, tc.code, pe.Code, "%s; %s: %v", tc.set, tc.q, pe)
			require.Contains(t, pe.Error(), tc.want, "%s; %s", tc.set, tc.q)
		}
	})
}
