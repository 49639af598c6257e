package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// Version 5 (ulid_flake_block, ulid_flake_out_of_range, ...): the
// adoption and planted-object cases of CONTRIBUTING.md, "Adding a
// migration", step 5.

// TestToolInstallsAtVersions4And5Adopted: golang-migrate and goose, each
// with a release that shipped versions 1 to 4 (0.1.0, then 1 to 5),
// install; Migrate records what they installed, runs only the newer
// versions, and ulid_flake_block and the out-of-range error work.
func TestToolInstallsAtVersions4And5Adopted(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, upTo := range []int{4, 5} {
			for tool, install := range map[string]func(*sql.DB, string) int{
				"golang-migrate": func(sdb *sql.DB, u string) int {
					table := "ulid_flake_schema_migrations"
					err := migrateULIDFlake(releaseFS(t, migrations.FS(), upTo), withParams(t, u, "sslmode", "disable", "x-migrations-table", table), false)
					require.NoError(t, err)
					return golangMigrateVersion(t, sdb, table)
				},
				"goose": func(sdb *sql.DB, _ string) int {
					p, err := gooseULIDFlake(sdb, releaseFS(t, migrations.GooseFS(), upTo))
					require.NoError(t, err)
					_, err = p.Up(ctx)
					require.NoError(t, err)
					return gooseVersion(t, sdb, "ulid_flake_goose_db_version")
				},
			} {
				sdb, u := emptyDBURL(t, db.Server)
				require.Equal(t, upTo, install(sdb, u), tool)
				steps, err := migrations.Migrate(ctx, sdb)
				require.NoError(t, err, "%s to %d", tool, upTo)
				var ran []int
				for _, s := range steps {
					ran = append(ran, s.Version)
				}
				var want []int
				for v := upTo + 1; v <= migrations.Latest(); v++ {
					want = append(want, v)
				}
				require.Equal(t, want, ran, "%s to %d: Migrate runs only the newer versions", tool, upTo)
				var n, newest int
				require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*), max(version) FROM ulid_flake_migrations`).Scan(&n, &newest))
				require.Equal(t, [2]int{migrations.Latest(), migrations.Latest()}, [2]int{n, newest})
				checkVersion5(t, sdb, "")
			}
		}
	})
}

// checkVersion5 checks, in schema (or the current one when ""), that
// ulid_flake_block(3) returns 3 ascending IDs and that ulid_flake_at of a
// time before the epoch raises 22003 with version 5's hint.
func checkVersion5(t *testing.T, sdb *sql.DB, schema string) {
	t.Helper()
	ctx := context.Background()
	if schema != "" {
		schema += "."
	}
	var a, b, c int64
	require.NoError(t, sdb.QueryRowContext(ctx, `SELECT x[1], x[2], x[3] FROM (SELECT `+schema+`ulid_flake_block(3) AS x) s`).Scan(&a, &b, &c))
	require.True(t, 0 < a && a < b && b < c, "ulid_flake_block(3) = %d, %d, %d", a, b, c)
	_, err := sdb.ExecContext(ctx, `SELECT `+schema+`ulid_flake_at('1990-01-01 00:00:00+00')`)
	var pe *pgconn.PgError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, "22003", pe.Code)
	require.Contains(t, pe.Hint, "ulid_flake_set_epoch", "version 5's hint")
}

// plantEscalation is a body that makes role superuser when a superuser
// runs it, then returns ret.
func plantEscalation(role, ret string) string {
	return `BEGIN IF current_setting('is_superuser') = 'on' THEN EXECUTE 'ALTER ROLE ` + role + ` SUPERUSER'; END IF; RETURN ` + ret + `; END`
}

// TestPlantedBlockFunctionRefused: a role that may create objects in the
// install schema plants a ulid_flake_block at version 4, which Migrate
// would otherwise adopt (the same signature) or leave beside
// the real one (another signature): Migrate refuses it (ErrForeignOwner,
// naming the role) and runs none of it.
func TestPlantedBlockFunctionRefused(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, sig := range []string{"n integer", "n text", "n bigint"} {
			sdb := itest.EmptyDB(t, db.Server)
			role := "block_planter_" + pgtest.UniqueName() // roles are the server's: unique across runs
			_, err := migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
			require.NoError(t, err)
			_, err = sdb.ExecContext(ctx, `DROP ROLE IF EXISTS `+role+`; CREATE ROLE `+role+`; GRANT CREATE ON SCHEMA public TO `+role)
			require.NoError(t, err)
			t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP ROLE IF EXISTS `+role) })
			conn, err := sdb.Conn(ctx)
			require.NoError(t, err)
			_, err = conn.ExecContext(ctx, `SET ROLE `+role+`; CREATE FUNCTION public.ulid_flake_block(`+sig+`) RETURNS bigint[]
				LANGUAGE plpgsql AS $$`+plantEscalation(role, "ARRAY[42]")+`$$; RESET ROLE`)
			require.NoError(t, err)
			require.NoError(t, conn.Close())

			_, err = migrations.Migrate(ctx, sdb)
			require.ErrorIs(t, err, migrations.ErrForeignOwner, sig)
			require.ErrorContains(t, err, role)
			require.False(t, isSuper(t, sdb, role), "%s ran as the superuser", sig)
			_, err = sdb.ExecContext(ctx, `DROP OWNED BY `+role+`; REVOKE CREATE ON SCHEMA public FROM `+role)
			require.NoError(t, err)
			_, err = migrations.Migrate(ctx, sdb)
			require.NoError(t, err, "once the plant is gone")
			checkVersion5(t, sdb, "")
		}
	})
}

// isSuper reports whether role is a superuser.
func isSuper(t *testing.T, sdb *sql.DB, role string) bool {
	t.Helper()
	var s bool
	require.NoError(t, sdb.QueryRowContext(context.Background(), `SELECT rolsuper FROM pg_roles WHERE rolname = $1`, role).Scan(&s))
	return s
}

// TestPlantedOverloadsOfVersion5NeverRun: on a full install, a role
// with CREATE on the install schema plants overloads of ulid_flake_block
// that a looser call would prefer (text, bigint, numeric), of the
// generators it calls (with a defaulted argument), and of
// ulid_flake_out_of_range (that ulid_flake_min and _max call). A
// superuser's blocks.Source, ulid_flake_block and ulid_flake_at never run
// them: they call the real functions (or fail), and Migrate refuses the
// planted ulid_flake_block overloads.
func TestPlantedOverloadsOfVersion5NeverRun(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		mallory := "mal9_" + name
		loginRole(t, db.Server, mallory, name)
		_, err := sdb.ExecContext(ctx, `CREATE SCHEMA ids`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `GRANT USAGE, CREATE ON SCHEMA ids TO `+mallory)
		require.NoError(t, err)
		mdb := openAs(t, db.Server, name, mallory)
		for _, plant := range []string{
			`ulid_flake_block(n text) RETURNS bigint[] LANGUAGE plpgsql AS $$` + plantEscalation(mallory, "ARRAY[42]") + `$$`,
			`ulid_flake_block(n bigint) RETURNS bigint[] LANGUAGE plpgsql AS $$` + plantEscalation(mallory, "ARRAY[42]") + `$$`,
			`ulid_flake_block(n numeric) RETURNS bigint[] LANGUAGE plpgsql AS $$` + plantEscalation(mallory, "ARRAY[42]") + `$$`,
			`ulid_flake_out_of_range(t timestamptz, e numeric) RETURNS bigint LANGUAGE plpgsql AS $$` + plantEscalation(mallory, "42") + `$$`,
			`ulid_flake_out_of_range(t text, e bigint) RETURNS bigint LANGUAGE plpgsql AS $$` + plantEscalation(mallory, "42") + `$$`,
		} {
			_, err = mdb.ExecContext(ctx, `CREATE FUNCTION ids.`+plant)
			require.NoError(t, err)
		}

		src, err := blocks.NewSource(sdb, blocks.WithSchema("ids"), blocks.WithSize(8))
		require.NoError(t, err)
		id, err := src.NewWait(context.Background())
		require.NoError(t, err)
		require.NotEqual(t, int64(42), id.Int64(), "a planted block")
		require.NoError(t, src.Close())
		checkVersion5(t, sdb, "ids")
		require.False(t, isSuper(t, sdb, mallory), "a planted overload ran as the superuser")

		// Overloads of the generators that ulid_flake_block calls.
		for _, plant := range []string{
			`ulid_flake_node_sid(x integer DEFAULT 0) RETURNS integer LANGUAGE plpgsql AS $$` + plantEscalation(mallory, "NULL") + `$$`,
			`ulid_flake(x integer DEFAULT 0) RETURNS bigint LANGUAGE plpgsql AS $$` + plantEscalation(mallory, "42") + `$$`,
		} {
			_, err = mdb.ExecContext(ctx, `CREATE FUNCTION ids.`+plant)
			require.NoError(t, err)
			var real bool // every ID carries a time: none is the plant's 42
			if err := sdb.QueryRowContext(ctx, `SELECT bool_and(x > 1048576) FROM unnest(ids.ulid_flake_block(3)) AS x`).Scan(&real); err == nil {
				require.True(t, real, "a planted generator made the block")
			}
			require.False(t, isSuper(t, sdb, mallory), "%s ran as the superuser", plant)
		}

		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, "ulid_flake_block(text)")
		require.False(t, isSuper(t, sdb, mallory))
	})
}

// TestPlantedOutOfRangeRefused: a ulid_flake_out_of_range(timestamptz,
// bigint) that another role planted at version 4, which version 5
// creates: Migrate refuses it (ErrForeignOwner) instead of leaving it in
// place for ulid_flake_min and _max to call; once it is gone, version 5
// installs and its hint is there.
func TestPlantedOutOfRangeRefused(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.EmptyDB(t, db.Server)
		role := "range_planter_" + pgtest.UniqueName() // roles are the server's: unique across runs
		_, err := migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `DROP ROLE IF EXISTS `+role+`; CREATE ROLE `+role+`; GRANT CREATE ON SCHEMA public TO `+role)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP ROLE IF EXISTS `+role) })
		conn, err := sdb.Conn(ctx)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `SET ROLE `+role+`; CREATE FUNCTION public.ulid_flake_out_of_range(t timestamptz, e bigint)
			RETURNS bigint LANGUAGE plpgsql AS $$`+plantEscalation(role, "42")+`$$; RESET ROLE`)
		require.NoError(t, err)
		require.NoError(t, conn.Close())

		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, role)
		require.False(t, isSuper(t, sdb, role))
		_, err = sdb.ExecContext(ctx, `DROP OWNED BY `+role+`; REVOKE CREATE ON SCHEMA public FROM `+role)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		checkVersion5(t, sdb, "")
	})
}

// TestUpgradeFromVersion4InPlace: a database at 0.1.0's version 4 that has
// made IDs upgrades in place to version 5 (Migrate to 4, then up): the
// offset it recorded is kept, the epoch is the one version 4 gave its
// sessions, this node gets its row, and new IDs repeat none of the old
// ones and sort after them; a Down to 4 and up again keep all of it.
func TestUpgradeFromVersion4InPlace(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.EmptyDB(t, db.Server)
		_, err := migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		ids := func() []int64 {
			t.Helper()
			var out []int64
			rows, err := sdb.QueryContext(ctx, `SELECT ulid_flake() FROM generate_series(1, 500) UNION ALL SELECT ulid_flake_scalable(3) FROM generate_series(1, 500)`)
			require.NoError(t, err)
			defer rows.Close()
			for rows.Next() {
				var id int64
				require.NoError(t, rows.Scan(&id))
				out = append(out, id)
			}
			require.NoError(t, rows.Err())
			return out
		}
		offset := func() (o int64) {
			t.Helper()
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT "offset" FROM ulid_flake_state`).Scan(&o))
			return
		}
		old, off := ids(), offset()
		steps, err := migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		require.Len(t, steps, 1)
		require.Equal(t, off, offset(), "the offset version 4 recorded")
		var epoch int64
		var rows int
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT ulid_flake_epoch_ms(), (SELECT count(*) FROM ulid_flake_nodes n JOIN ulid_flake_state s ON s.node_id = n.node_id)`).Scan(&epoch, &rows))
		require.Equal(t, flake.DefaultEpoch().UnixMilli(), epoch)
		require.Equal(t, 1, rows, "this node's row")
		fresh := ids()
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		require.Equal(t, off, offset())
		again := ids()
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		require.Equal(t, off, offset())
		last := ids()
		all := slices.Concat(old, fresh, again, last)
		slices.Sort(all)
		require.Len(t, slices.Compact(all), 4000, "no ID repeats across the upgrade, the Down and the upgrade again")
		require.Less(t, slices.Max(old), slices.Min(last), "IDs after the upgrade sort after the old ones")
	})
}
