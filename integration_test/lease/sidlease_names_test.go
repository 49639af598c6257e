package lease_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// TestSIDLeaseHostileTableNames: lease tables whose schema and namespace
// names end literals, comments and dollar quotes. Each lease works in its
// own schema's table, and nothing else in the catalog changes. With
// standard_conforming_strings off (a database owner may set it), pgx
// refuses the simple protocol the lease runs in: Acquire fails, saying so,
// and changes nothing. A server that refuses the setting (PostgreSQL 19)
// refuses the connection: Acquire fails with its error, and changes
// nothing.
func TestSIDLeaseHostileTableNames(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		// Each name in a database of its own, at once: every Acquire
		// waits V + MaxClockAhead, and the catalog outside the name's
		// schema must not change meanwhile. Refused, they wait for
		// nothing: one after another, in db.
		for i, name := range itest.HostileSchemas {
			t.Run(fmt.Sprintf("standard_conforming_strings=on/%d", i), func(t *testing.T) {
				t.Parallel()
				hostileTableName(t, db.Server.NewDB(t), "on", name)
			})
		}
		t.Run("standard_conforming_strings=off", func(t *testing.T) {
			for _, name := range itest.HostileSchemas {
				hostileTableName(t, db, "off", name)
			}
		})
	})
}

// hostileTableName takes a lease of namespace name in a lease table in a
// schema of that name, on db, with standard_conforming_strings scs.
func hostileTableName(t *testing.T, db *pgtest.DB, scs, name string) {
	ctx := context.Background()
	sdb := itest.StdDB(t, db)
	u, err := url.Parse(db.URL)
	require.NoError(t, err)
	q := u.Query()
	q.Set("standard_conforming_strings", scs)
	u.RawQuery = q.Encode()
	pool := itest.NewPool(t, u.String())
	schema := name
	_, err = db.Exec(ctx, `CREATE SCHEMA `+itest.QuoteIdent(schema))
	require.NoError(t, err)
	before := itest.CatalogBesides(t, ctx, sdb, schema)
	l, err := sidlease.Acquire(ctx, pool, name, sidlease.WithSchema(schema), sidlease.WithValidity(200*time.Millisecond))
	if scs == "off" {
		if itest.StandardStringsOnly(db.Server) {
			itest.RequireSQLState(t, err, "0A000", "Acquire with standard_conforming_strings=off")
		} else {
			require.ErrorContains(t, err, "standard_conforming_strings")
		}
		require.Equal(t, before, itest.CatalogBesides(t, ctx, sdb, schema), "the catalog outside %q changed", schema)
		_, err = db.Exec(ctx, `DROP SCHEMA `+itest.QuoteIdent(schema)+` CASCADE`)
		require.NoError(t, err)
		return
	}
	require.NoError(t, err, "%q with standard_conforming_strings=%s", name, scs)
	_, err = l.NewWait(ctx)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	var held int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM `+itest.QuoteIdent(schema)+`.ulid_flake_sid_leases`+
		` WHERE namespace = $1`, name).Scan(&held))
	require.Equal(t, 32, held, "the namespace's rows in its own table")
	require.Equal(t, before, itest.CatalogBesides(t, ctx, sdb, schema), "the catalog outside %q changed", schema)
	_, err = db.Exec(ctx, `DROP SCHEMA `+itest.QuoteIdent(schema)+` CASCADE`)
	require.NoError(t, err)
}
