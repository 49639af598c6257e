package sqlfn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestSchemaNamesUnderSettings: every hostile schema name, plus "$user",
// "public", mixed case, names that look like ours and 63+ bytes, installed
// with standard_conforming_strings on and off. Each either installs every
// object into that schema, with working functions and settings checks, or
// is refused with ErrSchema; nothing outside the schema changes. A server
// that refuses standard_conforming_strings = off (PostgreSQL 19) must
// refuse it.
func TestSchemaNamesUnderSettings(t *testing.T) {
	t.Parallel()
	names := append(append([]string{}, itest.HostileSchemas...), "$user", "public", "MixedCase", "ulid_flake_migrations",
		"ulid_flake_seq", strings.Repeat("a", 63), strings.Repeat("b", 64), `x+ 5) & 1048575`)
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		sdb.SetMaxOpenConns(1) // one session: the SET below holds for Migrate
		// "$user" names the role's schema on a search_path.
		_, err := sdb.ExecContext(ctx, `CREATE SCHEMA postgres`)
		require.NoError(t, err)
		for i, name := range names {
			// A quick run installs each name under one of the settings.
			for _, scs := range pgtest.Spread([]string{"on", "off"}, i, 2) {
				_, err := sdb.ExecContext(ctx, `SET standard_conforming_strings = `+scs)
				if scs == "off" && itest.StandardStringsOnly(db.Server) {
					itest.RequireSQLState(t, err, "0A000", "SET standard_conforming_strings = off")
					continue
				}
				require.NoError(t, err)
				schema := name + "_" + scs
				refused := name == "$user" || len(schema) > 63
				if name == "$user" || name == "public" {
					schema = name
				}
				q := `"` + strings.ReplaceAll(schema, `"`, `""`) + `"`
				_, _ = sdb.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+q)
				before := itest.CatalogBesides(t, ctx, sdb, schema)
				_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema(schema), migrations.WithVersionTable(schema))
				if refused {
					require.ErrorIs(t, err, migrations.ErrSchema, "%q scs=%s", schema, scs)
				} else {
					require.NoError(t, err, "%q scs=%s", schema, scs)
				}
				require.Equal(t, before, itest.CatalogBesides(t, ctx, sdb, schema), "only %q changed (scs=%s)", schema, scs)
				if refused {
					continue
				}
				var id, sid, low int64
				var n int
				require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
					WHERE n.nspname = $1 AND c.relname IN ('ulid_flake_seq', 'ulid_flake_state', $1)`, schema).Scan(&n))
				require.Equal(t, 3, n, "%q: sequence, state and version table in the schema", schema)
				_, err = sdb.ExecContext(ctx, `SELECT `+q+`.ulid_flake_set_epoch(1704067200000)`)
				require.NoError(t, err, "%q scs=%s", schema, scs)
				require.NoError(t, sdb.QueryRowContext(ctx, `SELECT `+q+`.ulid_flake(), `+q+`.ulid_flake_scalable(3), `+q+`.ulid_flake_min(now())`).Scan(&id, &sid, &low), "%q scs=%s", schema, scs)
				_, err = sdb.ExecContext(ctx, `SELECT `+q+`.ulid_flake_set_epoch(1234567890123456789)`)
				require.Error(t, err, "%q scs=%s", schema, scs)
			}
		}
	})
}
