package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/pgxtype"
	"github.com/ulidflake/ulidflake/sidlease"
)

// The argument types of the planted hijackers: those of the statements
// of sidlease and pgxtype, and their neighbours.
var clientTypes = []string{"integer", "bigint", "double precision", "numeric", "text", "name", `"char"`,
	"timestamp with time zone", "interval", "oid", "regclass", "regtype"}

// An unprivileged role plants, in public, a hijacking operator and
// function for every pg_catalog operator and function named in the SQL of
// sidlease and pgxtype, over the types those statements use; the
// database's search_path puts public before pg_catalog. A superuser's
// pool then registers pgxtype on each connection, takes a lease (its table
// in a schema of the superuser's: the role may create in public), makes IDs
// through several renewals and closes it. None of the planted objects
// runs, and the role stays unprivileged.
func TestSIDLeaseAndPgxtypeIgnoreSearchPath(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, name := itest.EmptyDBNamed(t, s)
			role := "attacker_" + name
			t.Cleanup(func() {
				c, err := pgx.Connect(context.Background(), s.URL)
				if err == nil {
					_, _ = c.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
					_, _ = c.Exec(context.Background(), `DROP ROLE IF EXISTS `+role)
					c.Close(context.Background())
				}
			})
			// The install first: the migrations refuse a schema another role may create in.
			_, err := migrations.Migrate(ctx, db) // the domain pgxtype looks up
			require.NoError(t, err)
			for _, q := range []string{
				`CREATE ROLE ` + role + ` NOLOGIN`,
				`GRANT CREATE ON SCHEMA public TO ` + role,
				`CREATE TABLE public.hijack_log (what text, who text)`,
				`CREATE SCHEMA leases`,
				`GRANT INSERT ON public.hijack_log TO PUBLIC`,
			} {
				_, err := db.ExecContext(ctx, q)
				require.NoError(t, err, q)
			}
			ops, funcs := itest.NamesUsed(t, ctx, db, "../../sidlease/claim.go", "../../pgxtype/domain.go")
			t.Logf("operators %v; functions %v", ops, funcs)
			conn, err := db.Conn(ctx)
			require.NoError(t, err)
			require.Greater(t, itest.PlantTypes(t, ctx, conn, role, ops, funcs, clientTypes), 500, "planted")
			require.NoError(t, conn.Close())
			_, err = db.ExecContext(ctx, `ALTER DATABASE `+name+` SET search_path = public, pg_catalog`)
			require.NoError(t, err)

			cfg, err := pgxpool.ParseConfig(s.URL)
			require.NoError(t, err)
			cfg.ConnConfig.Database = name
			cfg.AfterConnect = pgxtype.AfterConnect
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			require.NoError(t, err)
			defer pool.Close()
			l, err := sidlease.Acquire(ctx, pool, "search_path", sidlease.WithValidity(itest.LeaseValidity), sidlease.WithSchema("leases"))
			require.NoError(t, err)
			var last ulidflake.ID
			for deadline := time.Now().Add(3 * itest.LeaseValidity); time.Now().Before(deadline); {
				id, err := l.NewWait(ctx)
				require.NoError(t, err)
				require.Greater(t, id, last)
				last = id
			}
			var back []ulidflake.ID
			require.NoError(t, pool.QueryRow(ctx, `SELECT $1::ulid_flake_id[]`, []ulidflake.ID{last}).Scan(&back))
			require.Equal(t, []ulidflake.ID{last}, back)
			require.NoError(t, l.Close())

			var ran string
			var super bool
			require.NoError(t, db.QueryRowContext(ctx, `SELECT coalesce(pg_catalog.string_agg(DISTINCT what, '; '), '') FROM public.hijack_log`).Scan(&ran))
			require.Empty(t, ran, "planted objects ran")
			require.NoError(t, db.QueryRowContext(ctx, `SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = $1`, role).Scan(&super))
			require.False(t, super, "the role became superuser")
		})
	}
}
