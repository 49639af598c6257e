package integration_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// emptyDB returns a fresh database with nothing installed: template0's
// clone, not the migrated template.
func emptyDB(t *testing.T, s *pgtest.Server) *sql.DB {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, s.URL)
	require.NoError(t, err)
	defer admin.Close(ctx)
	name := fmt.Sprintf("empty_%d_%d", s.Major, nextEmpty())
	_, err = admin.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE template0`)
	require.NoError(t, err)
	cfg, err := pgx.ParseConfig(s.URL)
	require.NoError(t, err)
	cfg.Database = name
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(40)
	t.Cleanup(func() {
		db.Close()
		c, err := pgx.Connect(context.Background(), s.URL)
		if err == nil {
			_, _ = c.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
			c.Close(context.Background())
		}
	})
	return db
}

var (
	emptyMu sync.Mutex
	emptyN  int
)

func nextEmpty() int {
	emptyMu.Lock()
	defer emptyMu.Unlock()
	emptyN++
	return emptyN
}

// Replicas that each migrate at start-up: 8 callers at once, on a fresh
// database, on a migrated one, down and to a version: every call succeeds,
// the work is done once.
func TestMigrateConcurrentCallers(t *testing.T) {
	t.Parallel()
	const callers = 8
	latest := migrations.Latest()
	all := func(t *testing.T, db *sql.DB, opts ...migrations.Option) int {
		t.Helper()
		var wg sync.WaitGroup
		steps := make([]int, callers)
		errs := make([]error, callers)
		for i := range callers {
			wg.Go(func() {
				s, err := migrations.Migrate(context.Background(), db, opts...)
				steps[i], errs[i] = len(s), err
			})
		}
		wg.Wait()
		total := 0
		for i := range callers {
			require.NoError(t, errs[i], "caller %d", i)
			total += steps[i]
		}
		return total
	}
	version := func(t *testing.T, db *sql.DB) int {
		var v int
		require.NoError(t, db.QueryRow(`SELECT coalesce(max(version), 0) FROM ulid_flake_migrations`).Scan(&v))
		return v
	}
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			db := emptyDB(t, s)
			require.Equal(t, latest, all(t, db), "fresh: the versions applied once between them")
			require.Equal(t, latest, version(t, db))
			require.Zero(t, all(t, db), "migrated: nothing to do")
			require.Equal(t, 1, all(t, db, migrations.Down()), "Down: one version reverted between them")
			require.Equal(t, latest-1, version(t, db))
			require.Equal(t, latest-2, all(t, db, migrations.To(1)), "To(1)")
			require.Equal(t, 1, version(t, db))
			require.Equal(t, latest-1, all(t, db))
			var id int64
			require.NoError(t, db.QueryRow(`SELECT ulid_flake()`).Scan(&id))
			require.Positive(t, id)
		})
	}
}

// ulid_flake() under parallel plans: forced, and chosen by the planner for
// a CREATE TABLE AS over a table big enough for it.
func TestSQLGeneratorsUnderParallelPlans(t *testing.T) {
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
		exec := func(q string) {
			t.Helper()
			_, err := conn.Exec(ctx, q)
			require.NoError(t, err, q)
		}
		distinct := func(table string) {
			t.Helper()
			var n, d, ds int64
			require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT id), count(DISTINCT sid_id) FROM `+table).Scan(&n, &d, &ds))
			require.EqualValues(t, 1000000, n, table)
			require.Equal(t, n, d, table)
			require.Equal(t, n, ds, table)
		}
		exec(`SET ulid_flake.sid = 3`)
		exec(`CREATE TABLE big AS SELECT g FROM generate_series(1, 1000000) g`)
		exec(`ANALYZE big`)
		// Big enough for a parallel plan on its own, with default settings.
		rows, err := conn.Query(ctx, `EXPLAIN SELECT g FROM big WHERE g % 7 = 0`)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Contains(t, strings.Join(lines, "\n"), "Gather", "the planner does not choose a parallel plan for big")
		exec(`CREATE TABLE ids AS SELECT ulid_flake() AS id, ulid_flake_scalable() AS sid_id, g FROM big WHERE g % 1 = 0`)
		distinct("ids")
		// And with parallel plans forced.
		for _, q := range []string{`SET parallel_setup_cost = 0`, `SET parallel_tuple_cost = 0`, `SET min_parallel_table_scan_size = 0`, `SET ` + force + ` = on`} {
			exec(q)
		}
		exec(`CREATE TABLE ids2 AS SELECT ulid_flake() AS id, ulid_flake_scalable() AS sid_id, g FROM big`)
		distinct("ids2")
		var n int64
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT ulid_flake() FROM big) x`).Scan(&n))
		require.EqualValues(t, 1000000, n)
	})
}

// The sequence near the end of bigint: nextval() plus the offset never
// overflows, and the IDs made across the CYCLE stay distinct.
func TestSQLGeneratorNearSequenceEnd(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		_, err := db.Exec(ctx, `SELECT setval('ulid_flake_seq', 9223372036854775807 - 100)`)
		require.NoError(t, err)
		// Each function's IDs are distinct (the two layouts are not meant to
		// share a column).
		for _, f := range []string{"ulid_flake()", "ulid_flake_scalable(1)"} {
			var n, distinct int64
			require.NoError(t, db.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM (
				SELECT `+f+` AS id FROM generate_series(1, 300)) x`).Scan(&n, &distinct))
			require.EqualValues(t, 300, n, f)
			require.Equal(t, n, distinct, f)
		}
	})
}

// A clock step back, made with the epoch setting (moving the epoch forward
// by 5 s is the clock stepping back 5 s): the IDs stay distinct, as long as
// fewer than 2^20 were made since the earlier IDs of the same millisecond.
func TestSQLGeneratorClockStepBack(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, `CREATE TEMP TABLE ids (id bigint)`)
		require.NoError(t, err)
		for _, epoch := range []string{"1704067200000", "1704067205000", "1704067200000", "1704067210000"} {
			_, err = conn.Exec(ctx, `SELECT set_config('ulid_flake.epoch_ms', $1, false)`, epoch)
			require.NoError(t, err)
			_, err = conn.Exec(ctx, `INSERT INTO ids SELECT ulid_flake() FROM generate_series(1, 50000)`)
			require.NoError(t, err)
		}
		var n, distinct int64
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM ids`).Scan(&n, &distinct))
		require.EqualValues(t, 200000, n)
		require.Equal(t, n, distinct)
	})
}

// Install into schemas with hostile names: the functions work, and nothing
// outside the schema changes.
func TestMigrateHostileSchemaNames(t *testing.T) {
	t.Parallel()
	names := []string{`a$body$b`, `50%off`, `a"b`, "new\nline", `x';DROP TABLE victim;--`, `$$`, `$tag$`, `/*c*/`, `back\slash`,
		`Ünïcödé ☃`, strings.Repeat("é", 31) + "x"} // 63 bytes
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			db := emptyDB(t, s)
			ctx := context.Background()
			_, err := db.Exec(`CREATE TABLE victim (x int)`)
			require.NoError(t, err)
			for _, name := range names {
				q := pgx.Identifier{name}.Sanitize()
				_, err := db.Exec(`CREATE SCHEMA ` + q)
				require.NoError(t, err, name)
				before := catalogOutside(t, db, name)
				steps, err := migrations.Migrate(ctx, db, migrations.Schema(name))
				require.NoError(t, err, "%q", name)
				require.Len(t, steps, migrations.Latest())
				var id int64
				require.NoError(t, db.QueryRow(`SELECT `+q+`.ulid_flake()`).Scan(&id), "%q", name)
				require.Positive(t, id)
				var enc string
				require.NoError(t, db.QueryRow(`SELECT `+q+`.ulid_flake_encode($1)`, id).Scan(&enc))
				require.Len(t, enc, 13)
				require.Equal(t, before, catalogOutside(t, db, name), "objects outside schema %q changed", name)
				_, err = migrations.Migrate(ctx, db, migrations.Schema(name), migrations.To(0))
				require.NoError(t, err, "%q down", name)
			}
		})
	}
}

// catalogOutside lists the relations, functions and types of every schema
// but one, with the current user's superuser bit.
func catalogOutside(t *testing.T, db *sql.DB, schema string) string {
	t.Helper()
	var out string
	require.NoError(t, db.QueryRow(`SELECT string_agg(x, E'\n' ORDER BY x) FROM (
		SELECT 'rel ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ($1, 'pg_toast')
		UNION ALL SELECT 'proc ' || n.nspname || '.' || p.proname || ' ' || md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname <> $1
		UNION ALL SELECT 'type ' || n.nspname || '.' || y.typname FROM pg_type y JOIN pg_namespace n ON n.oid = y.typnamespace WHERE n.nspname <> $1
		UNION ALL SELECT 'role ' || rolname || ' ' || rolsuper::text FROM pg_roles
	) s(x)`, schema).Scan(&out))
	return out
}
