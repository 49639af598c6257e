package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// epochOf returns the installed epoch, and checks that ulid_flake() made
// now reads as now under it.
func epochOf(t *testing.T, ctx context.Context, db *sql.DB) int64 {
	t.Helper()
	var ms, id int64
	var t0, t1 time.Time
	require.NoError(t, db.QueryRowContext(ctx, `SELECT ulid_flake_epoch_ms(), clock_timestamp(), ulid_flake(), clock_timestamp()`).Scan(&ms, &t0, &id, &t1))
	e, err := flake.NewEpoch(time.UnixMilli(ms))
	require.NoError(t, err)
	got := e.Time(flake.ID(id))
	require.False(t, got.Before(t0.Truncate(time.Millisecond)) || got.After(t1), "under %d: %v outside [%v, %v]", ms, got, t0, t1)
	return ms
}

func sqlCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestMigrateEpoch: migrations.WithEpoch installs the epoch whatever the
// sessions' settings; replicas asking for another get ErrEpoch and change
// nothing, however they race; an upgrade from 4 and a Down from 5 and up
// again keep the epoch; an epoch Go would refuse is refused with 22023.
func TestMigrateEpoch(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		e2020, err := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
		require.NoError(t, err)
		def := flake.DefaultEpoch()

		// Replicas racing on a fresh database, two epochs: one wins, the
		// others with its epoch succeed, the rest get ErrEpoch.
		sdb := itest.EmptyDB(t, db.Server)
		sdb.SetMaxOpenConns(8)
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := e2020
				if i%2 == 1 {
					e = def
				}
				_, errs[i] = migrations.Migrate(ctx, sdb, migrations.WithEpoch(e))
			}()
		}
		wg.Wait()
		won := epochOf(t, ctx, sdb)
		for i, err := range errs {
			want := e2020.UnixMilli()
			if i%2 == 1 {
				want = def.UnixMilli()
			}
			if want == won {
				require.NoError(t, err, "replica %d", i)
			} else {
				require.ErrorIs(t, err, migrations.ErrEpoch, "replica %d", i)
			}
		}

		// A session setting does not override Epoch; Migrate without Epoch
		// accepts what is installed; ulid_flake_set_epoch's range is Go's.
		sdb = itest.EmptyDB(t, db.Server)
		sdb.SetMaxOpenConns(1)
		_, err = sdb.ExecContext(ctx, `SET ulid_flake.epoch_ms = 1704067200000`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithEpoch(e2020))
		require.NoError(t, err)
		require.Equal(t, e2020.UnixMilli(), epochOf(t, ctx, sdb))
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithEpoch(def))
		require.ErrorIs(t, err, migrations.ErrEpoch)
		require.ErrorContains(t, err, "every instance must pass the same WithEpoch")
		for _, bad := range []int64{-5, 244606207777793, 900000000000000000} {
			_, err = sdb.ExecContext(ctx, `SELECT ulid_flake_set_epoch($1::bigint)`, bad)
			require.Equal(t, "22023", sqlCode(err), "%d: %v", bad, err)
		}
		// IDs were made: a later epoch would repeat their timestamps.
		_, err = sdb.ExecContext(ctx, `SELECT ulid_flake_set_epoch($1::bigint)`, e2020.UnixMilli()+1)
		require.Equal(t, "55000", sqlCode(err), "%v", err)
		require.Equal(t, e2020.UnixMilli(), epochOf(t, ctx, sdb))

		// Down from 5 is refused while version 4 would give sessions
		// another epoch; with the database's setting holding it, it goes,
		// and 5 again keeps it.
		_, err = sdb.ExecContext(ctx, `RESET ulid_flake.epoch_ms`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.Equal(t, "55000", sqlCode(err), "%v", err)
		require.ErrorContains(t, err, "the default: 1704067200000")
		var dbName string
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT current_database()`).Scan(&dbName))
		_, err = sdb.ExecContext(ctx, `ALTER DATABASE `+dbName+` SET ulid_flake.epoch_ms = 1577836800000`)
		require.NoError(t, err)
		sdb.SetMaxIdleConns(0) // new sessions, which read the database's setting
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		var at time.Time
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT ulid_flake_time(0)`).Scan(&at))
		require.Equal(t, e2020.UnixMilli(), at.UnixMilli(), "version 4 after Down: a new session reads 5's epoch")
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		require.Equal(t, e2020.UnixMilli(), epochOf(t, ctx, sdb))

		// Once IDs were made, an upgrade where the settings gave some
		// sessions another epoch is refused (ErrEpoch, 55000), naming
		// them: a role's (whatever the case of the setting's name), and
		// the sessions without one (the default) when Epoch asks for
		// another; until the settings all say the epoch asked for.
		sdb = itest.EmptyDB(t, db.Server)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `SELECT ulid_flake() FROM generate_series(1, 10)`)
		require.NoError(t, err)
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT current_database()`).Scan(&dbName))
		role := "app_epoch_" + dbName
		_, err = sdb.ExecContext(ctx, `CREATE ROLE `+role+`; ALTER ROLE `+role+` IN DATABASE `+dbName+` SET "ULID_FLAKE.Epoch_MS" = '1577836800000'`)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP ROLE IF EXISTS `+role) })
		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrEpoch)
		require.Equal(t, "55000", sqlCode(err), "%v", err)
		require.ErrorContains(t, err, role)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithEpoch(e2020))
		require.ErrorIs(t, err, migrations.ErrEpoch)
		require.ErrorContains(t, err, "the default: 1704067200000")
		_, err = sdb.ExecContext(ctx, `ALTER DATABASE `+dbName+` SET ulid_flake.epoch_ms = E'\t1577836800000 '`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithEpoch(e2020))
		require.ErrorIs(t, err, migrations.ErrEpoch, "a session that started before the setting had the default")
		require.ErrorContains(t, err, "this session's start")
		sdb.SetMaxIdleConns(0)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithEpoch(e2020))
		require.NoError(t, err)
		require.Equal(t, e2020.UnixMilli(), epochOf(t, ctx, sdb))

		// A role whose setting is empty had the default, as version 4
		// read it: a Down to 4 would move its sessions.
		_, err = sdb.ExecContext(ctx, `ALTER ROLE `+role+` IN DATABASE `+dbName+` SET ulid_flake.epoch_ms = ''`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.Equal(t, "55000", sqlCode(err), "%v", err)
		require.ErrorContains(t, err, role)

		// Epoch with a Down or a target below 5, where nothing keeps it.
		_, err = migrations.Migrate(ctx, sdb, migrations.WithEpoch(e2020), migrations.WithTarget(4))
		require.ErrorIs(t, err, migrations.ErrEpoch)

		// An upgrade from 4 where the setting held another epoch keeps it.
		sdb = itest.EmptyDB(t, db.Server)
		sdb.SetMaxOpenConns(1)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `SET ulid_flake.epoch_ms = 1577836800000`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		require.Equal(t, e2020.UnixMilli(), epochOf(t, ctx, sdb))

		// A setting Go would refuse fails the install with 22023, and a
		// setting that is no integer with 23514, naming the setting.
		for bad, code := range map[string]string{"-5": "22023", "900000000000000000": "22023", "2020-01-01": "23514"} {
			sdb = itest.EmptyDB(t, db.Server)
			sdb.SetMaxOpenConns(1)
			_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
			require.NoError(t, err)
			_, err = sdb.ExecContext(ctx, `SET ulid_flake.epoch_ms = '`+bad+`'`)
			require.NoError(t, err)
			_, err = migrations.Migrate(ctx, sdb)
			require.Equal(t, code, sqlCode(err), "%s: %v", bad, err)
			require.ErrorContains(t, err, "ulid_flake.epoch_ms")
		}
	})
}

// TestMigrateAfterOlderReleaseAdopted: an install of every version, made
// by another tool, adopted by an older release that recorded only the
// versions it knew: this build records the rest without running them
// again (they would fail: their objects exist), and the install works.
func TestMigrateAfterOlderReleaseAdopted(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.EmptyDB(t, db.Server)
		all, err := migrations.All()
		require.NoError(t, err)
		for _, m := range all {
			_, err := sdb.ExecContext(ctx, "BEGIN;\n"+m.Up+"\nCOMMIT;")
			require.NoError(t, err, "version %d", m.Version)
		}
		_, err = sdb.ExecContext(ctx, `CREATE TABLE ulid_flake_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
		require.NoError(t, err)
		for _, m := range all[:len(all)-2] {
			_, err := sdb.ExecContext(ctx, `INSERT INTO ulid_flake_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
			require.NoError(t, err)
		}
		steps, err := migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		require.Len(t, steps, 2)
		epochOf(t, ctx, sdb)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(len(all)-2))
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		epochOf(t, ctx, sdb)
	})
}
