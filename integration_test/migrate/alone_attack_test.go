package migrate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// A database owner who is not the installer sets the database's
// search_path to "public, pg_catalog" and plants a domain public.text:
// the check Migrate runs first declares its variables with qualified
// types, so the domain's CHECK never runs as the installer, and the
// check refuses the owner's schema (it failed: the owner became
// superuser, and Migrate installed).
func TestMigrateCheckRunsNoCodeOfTheDatabaseOwner(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		owner := "dbo_" + name
		loginRole(t, db.Server, owner, name)
		_, err := sdb.ExecContext(ctx, `ALTER DATABASE `+name+` OWNER TO `+owner)
		require.NoError(t, err)
		odb := openAs(t, db.Server, name, owner)
		_, err = odb.ExecContext(ctx, `ALTER DATABASE `+name+` SET search_path = public, pg_catalog`)
		require.NoError(t, err)
		_, err = odb.ExecContext(ctx, `CREATE FUNCTION public.evil(x pg_catalog.text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) current_user) THEN
		EXECUTE 'ALTER ROLE `+owner+` SUPERUSER';
	END IF;
	RETURN true;
END$$;
CREATE DOMAIN public.text AS pg_catalog.text CHECK (public.evil(VALUE))`)
		require.NoError(t, err)
		sdb2 := openAs(t, db.Server, name, "") // a new session reads the database's search_path
		_, err = migrations.Migrate(ctx, sdb2)
		require.False(t, isSuper(t, sdb2, owner), "the database owner became superuser (Migrate: %v)", err)
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
	})
}

// A role that is a member of the installer WITH INHERIT FALSE, SET FALSE
// (PostgreSQL 16+) does not have the installer's rights: its CREATE on
// the install schema is refused like any other role's (it failed: the
// check excused members, and a planted text overload of an owner
// function ran as the superuser).
func TestMemberWithoutTheInstallersRightsRefused(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		var v int
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&v))
		if v < 160000 {
			t.Skip("SET option from PostgreSQL 16")
		}
		inst, app := "ins_"+name, "app_"+name
		loginRole(t, db.Server, inst, name)
		loginRole(t, db.Server, app, name)
		_, err := sdb.ExecContext(ctx, `ALTER DATABASE `+name+` OWNER TO `+inst+`; GRANT pg_read_all_settings TO `+inst+`;
			GRANT SELECT ON pg_catalog.pg_file_settings TO `+inst+`; GRANT EXECUTE ON FUNCTION pg_catalog.pg_show_all_file_settings() TO `+inst)
		require.NoError(t, err)
		idb := openAs(t, db.Server, name, inst)
		_, err = idb.ExecContext(ctx, `CREATE SCHEMA ids`)
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `GRANT `+inst+` TO `+app+` WITH INHERIT FALSE, SET FALSE; GRANT USAGE, CREATE ON SCHEMA ids TO `+app)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, idb, migrations.WithSchema("ids"))
		if err == nil {
			// Installed: the member plants a text overload of an owner function.
			adb := openAs(t, db.Server, name, app)
			_, err2 := adb.ExecContext(ctx, `CREATE FUNCTION ids.ulid_flake_retire_node(node text) RETURNS void LANGUAGE plpgsql AS $$BEGIN EXECUTE 'ALTER ROLE `+app+` SUPERUSER'; END$$`)
			require.NoError(t, err2)
			_, _ = sdb.ExecContext(ctx, `SELECT ids.ulid_flake_retire_node('00000000-0000-0000-0000-000000000001')`) // docs/deployments.md's form
			require.False(t, isSuper(t, sdb, app), "the member became superuser")
		}
		require.ErrorIs(t, err, migrations.ErrForeignOwner, "a role that may CREATE in ids and cannot act as the installer was accepted")
	})
}

// ALTER DEFAULT PRIVILEGES ... GRANT ALL ON TABLES in the install schema
// gives the application role TRIGGER and DELETE on Migrate's version
// table. The role empties the table and puts a trigger on it: the next
// Migrate refuses the trigger before it writes (it failed: Migrate
// recorded the versions again, and the trigger ran as the installer).
// The same for a trigger on the state, before a Down writes it.
func TestTriggerOnTheVersionTableRefused(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		app := "app_" + name
		loginRole(t, db.Server, app, name)
		_, err := sdb.ExecContext(ctx, `CREATE SCHEMA ids; CREATE SCHEMA `+app+` AUTHORIZATION `+app+`;
			GRANT USAGE ON SCHEMA ids TO `+app+`; ALTER DEFAULT PRIVILEGES IN SCHEMA ids GRANT ALL ON TABLES TO `+app)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.NoError(t, err)
		adb := openAs(t, db.Server, name, app)
		_, err = adb.ExecContext(ctx, `CREATE FUNCTION `+app+`.evil() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) current_user) THEN
		EXECUTE 'ALTER ROLE `+app+` SUPERUSER';
	END IF;
	RETURN NULL;
END$$;
CREATE TRIGGER t AFTER INSERT OR DELETE ON ids.ulid_flake_migrations FOR EACH ROW EXECUTE FUNCTION `+app+`.evil();
DELETE FROM ids.ulid_flake_migrations`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.False(t, isSuper(t, sdb, app), "the application role became superuser (Migrate: %v)", err)
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, "trigger t on ids.ulid_flake_migrations")
		_, err = sdb.ExecContext(ctx, `DROP TRIGGER t ON ids.ulid_flake_migrations;
			CREATE TRIGGER s BEFORE INSERT OR UPDATE ON ids.ulid_flake_state FOR EACH ROW EXECUTE FUNCTION `+app+`.evil()`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"), migrations.WithTarget(4))
		require.False(t, isSuper(t, sdb, app), "the application role became superuser (Migrate: %v)", err)
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, "trigger s on ids.ulid_flake_state")
	})
}
