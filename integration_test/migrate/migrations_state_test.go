package migrate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestMigrateRedrawsOnClones: the generator state records the database it
// was drawn on. A database made with CREATE DATABASE ... TEMPLATE (every
// test database is one, checked by the harness as Migrate would: a state
// that names another database here), a schema-only dump (no state row) and
// a full dump restored on another cluster (another system identifier) each
// get a new offset from Migrate; the same database (a promoted physical
// replica has the same system identifier and database OID) keeps its own.
func TestMigrateRedrawsOnClones(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		state := func() (oid int64, drawn time.Time) {
			t.Helper()
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT database_oid::bigint, drawn_at FROM ulid_flake_state`).Scan(&oid, &drawn))
			return
		}
		var self int64
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT oid::bigint FROM pg_database WHERE datname = current_database()`).Scan(&self))
		_, err := sdb.ExecContext(ctx, `UPDATE ulid_flake_state SET database_oid = 1`)
		require.NoError(t, err, "the template's state, as a clone has it")
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		oid, drawn := state()
		require.Equal(t, self, oid, "redrawn for this database")
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		_, again := state()
		require.Equal(t, drawn, again, "the same database keeps its offset")

		for _, clone := range []string{`DELETE FROM ulid_flake_state`, `UPDATE ulid_flake_state SET system_id = system_id + 1`} {
			_, err = sdb.ExecContext(ctx, clone)
			require.NoError(t, err)
			_, err = migrations.Migrate(ctx, sdb)
			require.NoError(t, err)
			oid, again = state()
			require.Equal(t, self, oid, clone)
			require.True(t, again.After(drawn), clone)
			drawn = again
		}
	})
}

// TestMigrateAdoptsOtherToolsInstall: the files run as another tool runs
// them (golang-migrate, goose, psql), up to each version, then Migrate: it
// records what is installed and applies the rest, instead of failing on
// objects that exist. On each adopted install, a scalable default with no
// SID is refused at insert time (23514), as docs/sql.md says.
func TestMigrateAdoptsOtherToolsInstall(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			all, err := migrations.All()
			require.NoError(t, err)
			for v := 1; v <= len(all); v++ {
				db := itest.EmptyDB(t, s)
				for _, m := range all[:v] {
					_, err := db.ExecContext(ctx, m.Up)
					require.NoError(t, err, "version %d", m.Version)
				}
				steps, err := migrations.Migrate(ctx, db)
				require.NoError(t, err, "installed to %d by another tool", v)
				require.Len(t, steps, len(all)-v)
				var n, max int
				require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*), max(version) FROM ulid_flake_migrations`).Scan(&n, &max))
				require.Equal(t, len(all), n)
				require.Equal(t, len(all), max)

				// A scalable default with no SID is refused at insert time.
				_, err = db.ExecContext(ctx, `CREATE TABLE scal (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable(), v int)`)
				require.NoError(t, err)
				_, err = db.ExecContext(ctx, `INSERT INTO scal (v) VALUES (1)`)
				var pgErr *pgconn.PgError
				require.True(t, errors.As(err, &pgErr), "%v", err)
				require.Equal(t, "23514", pgErr.Code)
			}
		})
	}
}
