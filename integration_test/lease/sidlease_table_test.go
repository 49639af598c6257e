package lease_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// plantTraps creates, as role, functions that record in public.trap_log
// that they ran and as whom, and try to make role a superuser.
func plantTraps(t *testing.T, db *pgtest.DB, role string) {
	t.Helper()
	_, err := db.Exec(context.Background(), `CREATE TABLE public.trap_log (what text, who text);
		GRANT INSERT ON public.trap_log TO PUBLIC;
		SET ROLE `+role+`;
		CREATE FUNCTION public.trap() RETURNS boolean LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO public.trap_log VALUES ('trap', current_user);
			BEGIN
				EXECUTE 'ALTER ROLE `+role+` SUPERUSER';
			EXCEPTION WHEN OTHERS THEN NULL;
			END;
			RETURN true;
		END$$;
		CREATE FUNCTION public.trap_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM public.trap(); RETURN NULL; END$$;
		CREATE FUNCTION public.trap_text() RETURNS text LANGUAGE plpgsql AS $$
		BEGIN PERFORM public.trap(); RETURN 'x'; END$$;
		CREATE FUNCTION public.trap_bool(text) RETURNS boolean LANGUAGE plpgsql AS $$
		BEGIN RETURN public.trap(); END$$;
		CREATE FUNCTION public.same(text) RETURNS text IMMUTABLE LANGUAGE sql AS 'SELECT $1';
		CREATE DOMAIN public.trap_domain AS text CHECK (public.trap_bool(VALUE));
		RESET ROLE`)
	require.NoError(t, err)
}

// leaseTableDDL is the lease table as Acquire creates it.
const leaseTableDDL = `CREATE TABLE public.ulid_flake_sid_leases (namespace text NOT NULL, sid int NOT NULL CHECK (sid >= 0 AND sid <= 31),
	token bigint NOT NULL DEFAULT 0, holder text, acquired_at timestamptz, expires_at timestamptz NOT NULL DEFAULT '-infinity',
	minted_below bigint NOT NULL DEFAULT 0, PRIMARY KEY (namespace, sid))`

// A role that may create tables in public (granted, as before 15) makes
// the lease table before any instance does, with code the lease's
// statements would run as each holder: a trigger, a rule, row level
// security, a column default, a CHECK constraint, an index expression or a
// domain that call its functions; or a view in its place. Acquire, as the
// superuser, refuses each (ErrLeaseTable: another role may create in
// public, and the error gives the REVOKE) before it runs a statement that
// would fire it: none of the role's functions runs, and the role stays
// unprivileged. Once the REVOKE runs, the table the role made is refused
// for its owner, who is not public's; dropped, Acquire creates its own.
func TestSIDLeaseRefusesTableWithCode(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		role := newRole(t, db, "planter")
		_, err := db.Exec(ctx, `GRANT CREATE ON SCHEMA public TO `+role)
		require.NoError(t, err)
		plantTraps(t, db, role)
		for _, tc := range []struct{ name, plant string }{
			{"trigger", leaseTableDDL + `; CREATE TRIGGER trap BEFORE INSERT OR UPDATE ON public.ulid_flake_sid_leases
				FOR EACH STATEMENT EXECUTE FUNCTION public.trap_trigger()`},
			{"row trigger", leaseTableDDL + `; CREATE TRIGGER "Trap ""1""" AFTER UPDATE ON public.ulid_flake_sid_leases
				FOR EACH ROW EXECUTE FUNCTION public.trap_trigger()`},
			{"rule", leaseTableDDL + `; CREATE RULE trap AS ON UPDATE TO public.ulid_flake_sid_leases
				DO ALSO SELECT public.trap()`},
			{"row level security", leaseTableDDL + `; ALTER TABLE public.ulid_flake_sid_leases ENABLE ROW LEVEL SECURITY;
				CREATE POLICY trap ON public.ulid_flake_sid_leases USING (public.trap_bool(namespace))`},
			{"default", leaseTableDDL + `; ALTER TABLE public.ulid_flake_sid_leases ALTER COLUMN holder SET DEFAULT public.trap_text()`},
			{"check", leaseTableDDL + `; ALTER TABLE public.ulid_flake_sid_leases ADD CHECK (public.trap_bool(holder))`},
			{"index", leaseTableDDL + `; CREATE INDEX ON public.ulid_flake_sid_leases (public.same(holder))`},
			{"domain", `CREATE TABLE public.ulid_flake_sid_leases (namespace public.trap_domain NOT NULL, sid int NOT NULL,
				token bigint NOT NULL DEFAULT 0, holder text, acquired_at timestamptz, expires_at timestamptz NOT NULL DEFAULT '-infinity',
				minted_below bigint NOT NULL DEFAULT 0, PRIMARY KEY (namespace, sid))`},
			{"view", `CREATE TABLE public.leases_behind (what text, who text);
				CREATE VIEW public.ulid_flake_sid_leases AS SELECT * FROM public.leases_behind`},
		} {
			_, err := db.Exec(ctx, `SET ROLE `+role+`; `+tc.plant+`; RESET ROLE`)
			require.NoError(t, err, tc.name)
			_, err = sidlease.Acquire(ctx, db.Pool, "trapped", sidlease.WithValidity(time.Second))
			require.ErrorIs(t, err, sidlease.ErrLeaseTable, tc.name)
			require.ErrorContains(t, err, `REVOKE CREATE ON SCHEMA "public" FROM `+role, tc.name)
			_, err = db.Exec(ctx, `DROP TABLE IF EXISTS public.leases_behind CASCADE; DROP TABLE IF EXISTS public.ulid_flake_sid_leases`)
			require.NoError(t, err)
		}
		var ran int
		var super bool
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM public.trap_log`).Scan(&ran))
		require.Zero(t, ran, "the planted functions ran")
		require.NoError(t, db.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = $1`, role).Scan(&super))
		require.False(t, super, "the role became a superuser")

		// The table as Acquire makes it, made by that role, is refused
		// once the role may no longer create in public: it is not owned by
		// public's owner.
		_, err = db.Exec(ctx, `SET ROLE `+role+`; `+leaseTableDDL+`; RESET ROLE; REVOKE CREATE ON SCHEMA public FROM `+role)
		require.NoError(t, err)
		_, err = sidlease.Acquire(ctx, db.Pool, "trapped", sidlease.WithValidity(time.Second))
		require.ErrorIs(t, err, sidlease.ErrLeaseTable)
		require.ErrorContains(t, err, "is owned by "+role)
		_, err = db.Exec(ctx, `DROP TABLE public.ulid_flake_sid_leases`)
		require.NoError(t, err)
		l, err := sidlease.Acquire(ctx, db.Pool, "trapped", sidlease.WithValidity(time.Second))
		require.NoError(t, err)
		_, err = l.NewWait(ctx)
		require.NoError(t, err)
		require.NoError(t, l.Close())
	})
}

// A role that may create schemas makes one named after another role (here
// the superuser the tests connect as), which that role's default
// search_path ("$user", public) puts first, with a lease table whose
// trigger calls the planter's function. Acquire with the default table
// does not use it (the default is public's table), refuses, since its
// instances of an earlier release would have used it (ErrLeaseTable), and
// runs none of the planter's code. Once public is its owner's alone
// again, WithSchema("public") takes public's table.
func TestSIDLeasePlantedUserSchema(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		role := newRole(t, db, "planter")
		var me string
		require.NoError(t, db.QueryRow(ctx, `SELECT current_user`).Scan(&me))
		_, err := db.Exec(ctx, `GRANT CREATE ON DATABASE `+db.Name+` TO `+role+`; GRANT CREATE ON SCHEMA public TO `+role)
		require.NoError(t, err)
		plantTraps(t, db, role)
		_, err = db.Exec(ctx, `SET ROLE `+role+`; CREATE SCHEMA "`+me+`";
			`+strings.Replace(leaseTableDDL, "public.", `"`+me+`".`, 1)+`;
			CREATE TRIGGER trap BEFORE INSERT OR UPDATE ON "`+me+`".ulid_flake_sid_leases
				FOR EACH STATEMENT EXECUTE FUNCTION public.trap_trigger();
			RESET ROLE`)
		require.NoError(t, err)
		var found string
		require.NoError(t, db.QueryRow(ctx, `SELECT relnamespace::regnamespace::text FROM pg_class
			WHERE oid = to_regclass('ulid_flake_sid_leases')`).Scan(&found))
		require.Equal(t, me, found, "the planted table is first on the search_path")

		_, err = sidlease.Acquire(ctx, db.Pool, "planted", sidlease.WithValidity(time.Second))
		require.ErrorIs(t, err, sidlease.ErrLeaseTable)
		require.ErrorContains(t, err, `WithSchema("`+me+`")`)
		var ran int
		var super bool
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM public.trap_log`).Scan(&ran))
		require.Zero(t, ran, "the planted functions ran")
		require.NoError(t, db.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = $1`, role).Scan(&super))
		require.False(t, super, "the role became a superuser")

		// Naming the schema takes public's table and ignores the planted one.
		_, err = db.Exec(ctx, `REVOKE CREATE ON SCHEMA public FROM `+role)
		require.NoError(t, err)
		l, err := sidlease.Acquire(ctx, db.Pool, "planted", sidlease.WithValidity(time.Second), sidlease.WithSchema("public"))
		require.NoError(t, err)
		require.NoError(t, l.Close())
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM public.trap_log`).Scan(&ran))
		require.Zero(t, ran, "the planted functions ran")
	})
}
