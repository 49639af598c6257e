package lease_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// newRole creates a login role named prefix_<database> (password "x"),
// dropped with what it owns in db when the test ends, and returns its name.
func newRole(t *testing.T, db *pgtest.DB, prefix string) string {
	t.Helper()
	role := prefix + "_" + db.Name
	_, err := db.Exec(context.Background(), `CREATE ROLE `+role+` LOGIN PASSWORD 'x'`)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = db.Exec(context.Background(), `DROP OWNED BY `+role+` CASCADE; DROP ROLE `+role)
	})
	return role
}

// roleURL returns a URL of db that logs in as role, with query parameters
// (name, value, ...) added.
func roleURL(t *testing.T, db *pgtest.DB, role string, params ...string) string {
	t.Helper()
	u, err := url.Parse(db.URL)
	require.NoError(t, err)
	u.User = url.UserPassword(role, "x")
	q := u.Query()
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20") // pgx reads + as itself
	return u.String()
}

// Two roles of one service, with the default search_path ("$user",
// public): svc_a owns a schema named after itself, svc_b has none. The
// database's owner created the lease table in public, as the error of a
// role that may not create it says, and granted both roles. With the
// default table, their instances share it and its 32 SIDs: also an instance whose connection string
// sets search_path (options=-c search_path=..., or a search_path
// parameter). No SID is held twice, a 33rd instance of either role gets
// ErrNoFreeSID, and no ID repeats. (Before the default was
// schema-qualified, svc_a's instances used svc_a.ulid_flake_sid_leases
// and svc_b's public.ulid_flake_sid_leases: every SID held twice.)
func TestSIDLeaseOneTableForEveryRole(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		a, b := newRole(t, db, "svc_a"), newRole(t, db, "svc_b")
		_, err := db.Exec(ctx, `CREATE SCHEMA `+a+` AUTHORIZATION `+a+`; `+leaseTableDDL+`;
			GRANT SELECT, INSERT, UPDATE ON public.ulid_flake_sid_leases TO `+a+`, `+b)
		require.NoError(t, err)
		pools := []*pgxpool.Pool{
			itest.NewPool(t, roleURL(t, db, a)),
			itest.NewPool(t, roleURL(t, db, b)),
			itest.NewPool(t, roleURL(t, db, a, "options", "-c search_path="+a)),
			itest.NewPool(t, roleURL(t, db, b, "search_path", "pg_catalog")),
		}
		// Every role's instances at once (each claim waits the validity):
		// an earlier release would have created svc_a's table in svc_a's
		// schema, and handed out its SIDs there a second time.
		var leases []*sidlease.Lease
		var mu sync.Mutex
		itest.RunWorkers(t, len(pools), func(w int) error {
			got, failed := acquireAll(t, pools[w], "roles", 8, allocValidity)
			mu.Lock()
			defer mu.Unlock()
			leases = append(leases, got...)
			return errors.Join(failed...)
		})
		want := make([]int, 32)
		for i := range want {
			want[i] = i
		}
		require.Equal(t, want, sids(leases), "32 distinct SIDs across the roles")
		for i, p := range pools {
			_, err := sidlease.Acquire(ctx, p, "roles", sidlease.WithValidity(allocValidity))
			require.ErrorIs(t, err, sidlease.ErrNoFreeSID, "a 33rd instance on pool %d", i)
		}
		var held int
		var own bool
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM public.ulid_flake_sid_leases
			WHERE namespace = 'roles' AND holder IS NOT NULL`).Scan(&held))
		require.Equal(t, 32, held)
		require.NoError(t, db.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, a+".ulid_flake_sid_leases").Scan(&own))
		require.False(t, own, "a lease table in svc_a's schema")

		const each = 2_000
		out := make([][]ulidflake.ID, len(leases))
		itest.RunWorkers(t, len(leases), func(i int) error {
			for len(out[i]) < each {
				id, err := leases[i].NewWait(ctx)
				if errors.Is(err, sidlease.ErrLeaseLost) {
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					return err
				}
				out[i] = append(out[i], id)
			}
			return nil
		})
		all := slices.Concat(out...)
		slices.Sort(all)
		require.Len(t, all, len(leases)*each)
		require.Equal(t, len(all), len(slices.Compact(all)), "duplicates across the roles' instances")
	})
}

// The table an earlier release created for a role whose search_path found
// another schema first (svc_a's own) is not split from silently: Acquire
// with the default table refuses (ErrLeaseTable), names both tables and
// the fixes, and creates nothing; WithSchema naming the old table's
// schema works; after the migration in docs/deployments.md (the old rows
// merged into public.ulid_flake_sid_leases, ceilings kept) the default
// works and makes IDs above the old table's ceilings.
func TestSIDLeaseEarlierReleaseTable(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		a, b := newRole(t, db, "svc_a"), newRole(t, db, "svc_b")
		_, err := db.Exec(ctx, `CREATE SCHEMA `+a+` AUTHORIZATION `+a)
		require.NoError(t, err)
		poolA, poolB := itest.NewPool(t, roleURL(t, db, a)), itest.NewPool(t, roleURL(t, db, b))
		// An earlier release's table, made by svc_a with the name alone; its
		// ceilings are 2 s ahead.
		ahead, err := flake.NewGenerator(flake.WithSID(0), flake.WithClock(func() time.Time { return time.Now().Add(2 * time.Second) }))
		require.NoError(t, err)
		ceiling, err := ahead.New()
		require.NoError(t, err)
		_, err = poolA.Exec(ctx, `CREATE TABLE ulid_flake_sid_leases (namespace text NOT NULL, sid int NOT NULL CHECK (sid BETWEEN 0 AND 31),
			token bigint NOT NULL DEFAULT 0, holder text, acquired_at timestamptz, expires_at timestamptz NOT NULL DEFAULT '-infinity',
			minted_below bigint NOT NULL DEFAULT 0, PRIMARY KEY (namespace, sid))`)
		require.NoError(t, err)
		_, err = poolA.Exec(ctx, `INSERT INTO ulid_flake_sid_leases (namespace, sid, token, minted_below)
			SELECT 'old', g, 7, $1 FROM generate_series(0, 31) g`, int64(ceiling))
		require.NoError(t, err)
		var where string
		require.NoError(t, db.QueryRow(ctx, `SELECT relnamespace::regnamespace::text FROM pg_class WHERE relname = 'ulid_flake_sid_leases'`).Scan(&where))
		require.Equal(t, a, where, "the earlier release's table is in svc_a's schema")

		_, err = sidlease.Acquire(ctx, poolA, "old", sidlease.WithValidity(testValidity))
		require.ErrorIs(t, err, sidlease.ErrLeaseTable)
		for _, s := range []string{`"public"."ulid_flake_sid_leases"`, `"` + a + `"."ulid_flake_sid_leases"`,
			`WithSchema("` + a + `")`, "docs/deployments.md"} {
			require.ErrorContains(t, err, s)
		}
		var created bool
		require.NoError(t, db.QueryRow(ctx, `SELECT to_regclass('public.ulid_flake_sid_leases') IS NOT NULL`).Scan(&created))
		require.False(t, created, "the refused Acquire created the new table")

		l, err := sidlease.Acquire(ctx, poolA, "old", sidlease.WithValidity(testValidity), sidlease.WithSchema(a))
		require.NoError(t, err, "WithSchema naming the old table's schema")
		id, err := l.NewWait(ctx)
		require.NoError(t, err)
		require.Greater(t, id, ceiling, "below the old table's ceiling")
		require.NoError(t, l.Close())

		// The database's owner creates the new table in public, an instance
		// of its own takes a SID of another namespace, and both roles are
		// granted the table.
		other, err := sidlease.Acquire(ctx, db.Pool, "new", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		require.NoError(t, other.Close())
		_, err = db.Exec(ctx, `GRANT SELECT, INSERT, UPDATE ON public.ulid_flake_sid_leases TO `+a+`, `+b)
		require.NoError(t, err)

		// The migration, every instance stopped (docs/deployments.md).
		_, err = db.Exec(ctx, strings.ReplaceAll(`BEGIN;
			LOCK TABLE public.ulid_flake_sid_leases, old_schema.ulid_flake_sid_leases;
			INSERT INTO public.ulid_flake_sid_leases AS p (namespace, sid, token, holder, acquired_at, expires_at, minted_below)
			SELECT namespace, sid, token, holder, acquired_at, expires_at, minted_below FROM old_schema.ulid_flake_sid_leases
			ON CONFLICT (namespace, sid) DO UPDATE
			SET minted_below = greatest(p.minted_below, excluded.minted_below), expires_at = greatest(p.expires_at, excluded.expires_at);
			DROP TABLE old_schema.ulid_flake_sid_leases;
			COMMIT`, "old_schema", a))
		require.NoError(t, err)
		for _, p := range []*pgxpool.Pool{poolA, poolB} {
			l, err := sidlease.Acquire(ctx, p, "old", sidlease.WithValidity(testValidity))
			require.NoError(t, err, "after the migration")
			id, err := l.NewWait(ctx)
			require.NoError(t, err)
			require.Greater(t, id, ceiling, "below the old table's ceiling after the migration")
			require.NoError(t, l.Close())
		}

	})
}

// On PostgreSQL 15 and later only the database's owner may create tables
// in public: a role that is not public's owner gets an error
// (ErrLeaseTable) that gives the statements to run once and the other way
// (WithSchema), and creates nothing. Once the database's owner runs those statements, as the error
// gives them, the role's instances take SIDs.
func TestSIDLeasePublicNotWritable(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		role := newRole(t, db, "svc_c")
		_, err := db.Exec(ctx, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`) // the default from 15 on
		require.NoError(t, err)
		pool := itest.NewPool(t, roleURL(t, db, role))
		_, err = sidlease.Acquire(ctx, pool, "ro", sidlease.WithValidity(testValidity))
		require.ErrorIs(t, err, sidlease.ErrLeaseTable)
		msg := err.Error()
		for _, s := range []string{"CREATE TABLE IF NOT EXISTS \"public\".\"ulid_flake_sid_leases\"",
			"GRANT SELECT, INSERT, UPDATE ON \"public\".\"ulid_flake_sid_leases\" TO \"" + role + "\";", "WithSchema(name)"} {
			require.Contains(t, msg, s)
		}
		var created bool
		require.NoError(t, db.QueryRow(ctx, `SELECT to_regclass('public.ulid_flake_sid_leases') IS NOT NULL`).Scan(&created))
		require.False(t, created, "the refused Acquire created the table")
		start := strings.Index(msg, "CREATE TABLE")
		end := strings.LastIndex(msg, `TO "`+role+`";`) + len(`TO "`+role+`";`)
		_, err = db.Exec(ctx, msg[start:end])
		require.NoError(t, err, "the statements the error gives")
		l, err := sidlease.Acquire(ctx, pool, "ro", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		_, err = l.NewWait(ctx)
		require.NoError(t, err)
		require.NoError(t, l.Close())
	})
}
