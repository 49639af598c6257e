package sqlfn_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestInstallIntoHostileSchemas installs into schemas with hostile names
// and checks that the functions work and that nothing else changed.
func TestInstallIntoHostileSchemas(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		_, err := sdb.ExecContext(ctx, `CREATE TABLE victim (x int)`)
		require.NoError(t, err)
		// Beside the shared names, one with the markers 005 fills in
		// ulid_flake_node_sync's body (@schema@, @s@) and a double quote.
		for _, name := range append(slices.Clone(itest.HostileSchemas), `x"@schema@'@s@`) {
			require.LessOrEqual(t, len(name), 63)
			q := `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
			_, err := sdb.ExecContext(ctx, `CREATE SCHEMA `+q)
			require.NoError(t, err)
			before := itest.CatalogBesides(t, ctx, sdb, name)
			var out strings.Builder
			_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema(name), migrations.WithVersionTable(name), migrations.WithDryRun(&out))
			require.NoError(t, err, name)
			require.Equal(t, before, itest.CatalogBesides(t, ctx, sdb, name), "a dry run changes nothing")
			steps, err := migrations.Migrate(ctx, sdb, migrations.WithSchema(name), migrations.WithVersionTable(name))
			require.NoError(t, err, name)
			require.Len(t, steps, migrations.Latest())
			require.Equal(t, before, itest.CatalogBesides(t, ctx, sdb, name), "only %q changed", name)
			var id, low, high int64
			var text string
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT `+q+`.ulid_flake(), `+q+`.ulid_flake_scalable(3),
				`+q+`.ulid_flake_encode(42), `+q+`.ulid_flake_min(now()), `+q+`.ulid_flake_max(now())`).Scan(&id, &id, &text, &low, &high), name)
			require.Equal(t, "000000000001A", text)
			require.Less(t, low, high)
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT `+q+`.ulid_flake_encode(42, 'cus')`).Scan(&text), name)
			require.Equal(t, "cus_000000000001A", text)
			_, err = sdb.ExecContext(ctx, `SELECT `+q+`.ulid_flake_encode(42, 'Cus')`)
			require.ErrorContains(t, err, "22023", name)
			// The owner's functions, which write the state and the generators.
			_, err = sdb.ExecContext(ctx, `SELECT `+q+`.ulid_flake_set_sid(5)`)
			require.NoError(t, err, name)
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT `+q+`.ulid_flake_scalable()`).Scan(&id), name)
			require.EqualValues(t, 5, id&31, name)
			_, err = sdb.ExecContext(ctx, `SELECT `+q+`.ulid_flake_build(7), `+q+`.ulid_flake_check_node(), `+q+`.ulid_flake_set_sid(NULL)`)
			require.NoError(t, err, name)
			// Every function the install's bodies call is its own or pg_catalog's
			// (x%%y's must not call x%y's: a name read twice by format()).
			var others string
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT coalesce(string_agg(DISTINCT rn.nspname, ', '), '')
				FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.refclassid = 'pg_proc'::regclass
				JOIN pg_proc r ON r.oid = d.refobjid JOIN pg_namespace rn ON rn.oid = r.pronamespace
				WHERE p.pronamespace = $1::regnamespace AND rn.nspname NOT IN ($2, 'pg_catalog')`, q, name).Scan(&others))
			require.Empty(t, others, "functions of %q call functions of other schemas", name)
			// The dry run's SQL, run as a script, does the same from scratch.
			_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema(name), migrations.WithVersionTable(name), migrations.WithTarget(0))
			require.NoError(t, err, name)
			_, err = sdb.ExecContext(ctx, out.String())
			require.NoError(t, err, "dry run SQL for %q", name)
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT `+q+`.ulid_flake()`).Scan(&id), name)
			require.Equal(t, before, itest.CatalogBesides(t, ctx, sdb, name), "only %q changed", name)
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
		sdb := itest.StdDB(t, db)
		defs := func(schema string) string {
			var s string
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT string_agg(x, E'\n' ORDER BY x) FROM (
				SELECT regexp_replace(regexp_replace(regexp_replace(replace(pg_get_functiondef(p.oid), n.nspname, 'S'), '\+ [0-9]+\)', '+ N)', 'g'), '\+ \([0-9]+\)::bigint\)', '+ N)', 'g'), '\s+', ' ', 'g') AS x
					FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
				UNION ALL SELECT t.typname || ':' || replace(pg_get_constraintdef(c.oid), n.nspname, 'S') || ':' || CASE c.contype WHEN 'c' THEN c.conname ELSE '' END FROM pg_constraint c
					JOIN pg_type t ON t.oid = c.contypid JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = $1
				UNION ALL SELECT sequencename || ':' || min_value || cycle FROM pg_sequences WHERE schemaname = $1) s`, schema).Scan(&s))
			return s
		}
		for _, s := range []string{"fresh", "upgraded"} {
			_, err := sdb.ExecContext(ctx, `CREATE SCHEMA `+s)
			require.NoError(t, err)
		}
		_, err := migrations.Migrate(ctx, sdb, migrations.WithSchema("fresh"))
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("upgraded"), migrations.WithTarget(1))
		require.NoError(t, err)
		v1 := defs("upgraded")
		var id1 int64
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT upgraded.ulid_flake()`).Scan(&id1))
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("upgraded"))
		require.NoError(t, err)
		require.Equal(t, defs("fresh"), defs("upgraded"))
		require.Positive(t, id1)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("upgraded"), migrations.WithTarget(1))
		require.NoError(t, err)
		require.Equal(t, v1, defs("upgraded"))
	})
}

// TestGeneratorWrapsClockStepsOverflow checks the exact guarantees: the low
// bits are (sequence + offset) mod 2^20, so within any 2^20 consecutive
// sequence values the IDs differ even when the clock steps back (simulated
// by moving the epoch forward with ulid_flake_set_epoch), and the sequence's last values
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
		_, err = conn.Exec(ctx, `CREATE TEMP TABLE ids AS SELECT ulid_flake() AS id FROM generate_series(1, 50000);
			SELECT ulid_flake_set_epoch(1704070800000, force => true);
			INSERT INTO ids SELECT ulid_flake() FROM generate_series(1, 50000);
			SELECT ulid_flake_set_epoch(1704067200000, force => true)`)
		require.NoError(t, err)
		var n, d int
		var behind bool
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT id), min(id) < ulid_flake_min(now() - interval '59 minutes') FROM ids`).Scan(&n, &d, &behind))
		require.Equal(t, 100000, n)
		require.Equal(t, n, d)
		require.True(t, behind, "the second half carries the earlier time")
		// Near the sequence's end: no overflow, and the low bits run on
		// through the cycle without a repeat.
		_, err = conn.Exec(ctx, `SELECT setval('ulid_flake_seq', max_value - 5) FROM pg_sequences WHERE sequencename = 'ulid_flake_seq'`)
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
		_, err = conn.Exec(ctx, `SELECT setval('ulid_flake_seq', max_value - 5) FROM pg_sequences WHERE sequencename = 'ulid_flake_seq'`)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, `SELECT ulid_flake_scalable(1) FROM generate_series(1, 12)`)
		require.NoError(t, err)
	})
}
