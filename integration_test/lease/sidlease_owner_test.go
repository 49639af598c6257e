package lease_test

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// The advisory lock earlier releases took to create the lease table.
const oldCreateLock = 7373474917

// A co-tenant, an unprivileged role, holds the advisory lock that earlier
// releases took to create the lease table (any role may take any advisory
// lock). The first Acquire, which creates the table, does not wait for it:
// its context's deadline is far off, and it returns with a lease before.
// (Before: it waited for the lock until its context ended.)
func TestSIDLeaseCoTenantLockDoesNotStall(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		tenant := newRole(t, db, "tenant")
		conn, err := itest.NewPool(t, roleURL(t, db, tenant)).Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(oldCreateLock))
		require.NoError(t, err)
		defer func() { _, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock_all()`) }()

		actx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		l, err := sidlease.Acquire(actx, db.Pool, "stall", sidlease.WithValidity(testValidity))
		require.NoError(t, err, "the first Acquire waited for the co-tenant's lock")
		_, err = l.NewWait(ctx)
		require.NoError(t, err)
		require.NoError(t, l.Close())
	})
}

// A schema in which a role other than its owner may create objects (a
// role granted CREATE, or PUBLIC) is refused for the lease table
// (ErrLeaseTable), whether the table exists or not: the error names the
// roles, gives the REVOKE and the other way (a schema of its own,
// WithSchema), and nothing is created. After the REVOKE as the error gives
// it, Acquire works. (Before: Acquire created the table in such a schema,
// or used the one another role made there.)
func TestSIDLeaseRefusesSharedSchema(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		other := newRole(t, db, "cotenant")
		for _, tc := range []struct{ name, grantee, table string }{
			{"a role", other, ""},
			{"PUBLIC", "PUBLIC", ""},
			{"a role, the table there", other, leaseTableDDL},
		} {
			_, err := db.Exec(ctx, `CREATE SCHEMA shared; GRANT CREATE ON SCHEMA shared TO `+tc.grantee+`;`+
				strings.ReplaceAll(tc.table, "public.", "shared."))
			require.NoError(t, err, tc.name)
			_, err = sidlease.Acquire(ctx, db.Pool, "shared", sidlease.WithValidity(testValidity), sidlease.WithSchema("shared"))
			require.ErrorIs(t, err, sidlease.ErrLeaseTable, tc.name)
			t.Logf("%s: %v", tc.name, err)
			revoke := `REVOKE CREATE ON SCHEMA "shared" FROM ` + tc.grantee
			for _, s := range []string{revoke, `WithSchema("ulid_flake")`, "CREATE SCHEMA ulid_flake"} {
				require.ErrorContains(t, err, s, tc.name)
			}
			var exists bool
			require.NoError(t, db.QueryRow(ctx, `SELECT to_regclass('shared.ulid_flake_sid_leases') IS NOT NULL`).Scan(&exists))
			require.Equal(t, tc.table != "", exists, "%s: the refused Acquire created the table", tc.name)
			if exists {
				var rows int
				require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM shared.ulid_flake_sid_leases`).Scan(&rows))
				require.Zero(t, rows, "%s: the refused Acquire added rows", tc.name)
			}

			_, err = db.Exec(ctx, revoke)
			require.NoError(t, err, tc.name)
			l, err := sidlease.Acquire(ctx, db.Pool, "shared", sidlease.WithValidity(testValidity), sidlease.WithSchema("shared"))
			require.NoError(t, err, "%s: after the REVOKE", tc.name)
			require.NoError(t, l.Close())
			_, err = db.Exec(ctx, `DROP SCHEMA shared CASCADE`)
			require.NoError(t, err)
		}
	})
}

// AcquireDB through lib/pq gets the explanatory errors that pgx does: a
// role that may not create the lease table gets the statements to run
// once (ErrLeaseTable); once the table exists but the role was not
// granted it, the server's 42501, read through lib/pq's error, gets the
// GRANT to run; after that GRANT, the lease works. (Before: lib/pq's
// errors were not read, and neither error gave the GRANT.)
func TestSIDLeaseLibPQExplains(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		role := newRole(t, db, "pq")
		u, err := url.Parse(roleURL(t, db, role))
		require.NoError(t, err)
		q := u.Query()
		q.Set("sslmode", "disable")
		u.RawQuery = q.Encode()
		pq, err := sql.Open("postgres", u.String())
		require.NoError(t, err)
		defer pq.Close()

		grant := `GRANT SELECT, INSERT, UPDATE ON "public"."ulid_flake_sid_leases" TO "` + role + `"`
		_, err = sidlease.AcquireDB(ctx, pq, "pq", sidlease.WithValidity(testValidity))
		require.ErrorIs(t, err, sidlease.ErrLeaseTable)
		t.Logf("no table: %v", err)
		require.ErrorContains(t, err, `CREATE TABLE IF NOT EXISTS "public"."ulid_flake_sid_leases"`)
		require.ErrorContains(t, err, grant)

		_, err = db.Exec(ctx, leaseTableDDL)
		require.NoError(t, err)
		_, err = sidlease.AcquireDB(ctx, pq, "pq", sidlease.WithValidity(testValidity))
		var state interface{ SQLState() string }
		require.ErrorAs(t, err, &state)
		require.Equal(t, "42501", state.SQLState())
		t.Logf("not granted: %v", err)
		require.ErrorContains(t, err, grant)

		_, err = db.Exec(ctx, grant)
		require.NoError(t, err)
		l, err := sidlease.AcquireDB(ctx, pq, "pq", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		_, err = l.NewWait(ctx)
		require.NoError(t, err)
		require.NoError(t, l.Close())
	})
}

// Other roles' rights to change the lease table are refused
// (ErrLeaseTable), the ones ALTER DEFAULT PRIVILEGES gives when the lease
// creates it included: a role with TRIGGER could attach code that runs as
// every holder (issue 39's review: it read another role's table as the
// holder). The error names the role and the REVOKE; after it, Acquire
// works. A trigger on the table, even its owner's, is refused too: the
// lease needs none. (Before: both were accepted, and the trigger ran.)
func TestSIDLeaseRefusesOthersRightsOnTheTable(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		changer := newRole(t, db, "changer")
		_, err := db.Exec(ctx, `CREATE SCHEMA leases; ALTER DEFAULT PRIVILEGES IN SCHEMA leases GRANT ALL ON TABLES TO `+changer)
		require.NoError(t, err)
		acquire := func() (*sidlease.Lease, error) {
			return sidlease.Acquire(ctx, db.Pool, "rights", sidlease.WithValidity(testValidity), sidlease.WithSchema("leases"))
		}
		_, err = acquire()
		require.ErrorIs(t, err, sidlease.ErrLeaseTable)
		require.ErrorContains(t, err, "REVOKE TRIGGER, TRUNCATE, REFERENCES ON")
		require.ErrorContains(t, err, changer)
		revoke := `REVOKE TRIGGER, TRUNCATE, REFERENCES ON leases.ulid_flake_sid_leases FROM ` + changer
		if db.Server.Major >= 17 {
			revoke += `; REVOKE MAINTAIN ON leases.ulid_flake_sid_leases FROM ` + changer
		}
		_, err = db.Exec(ctx, revoke)
		require.NoError(t, err)
		l, err := acquire()
		require.NoError(t, err)
		require.NoError(t, l.Close())

		_, err = db.Exec(ctx, `CREATE FUNCTION leases.noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
			CREATE TRIGGER watch BEFORE UPDATE ON leases.ulid_flake_sid_leases FOR EACH ROW EXECUTE FUNCTION leases.noop()`)
		require.NoError(t, err)
		_, err = acquire()
		require.ErrorIs(t, err, sidlease.ErrLeaseTable)
		require.ErrorContains(t, err, "triggers (watch)")
	})
}
