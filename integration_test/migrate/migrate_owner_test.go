package migrate_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// loginRole creates a LOGIN role (password "pw") that a cleanup drops
// with what it owns, after dropping the database dbName (which it may own).
func loginRole(t *testing.T, s *pgtest.Server, role, dbName string) {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, s.URL)
	require.NoError(t, err)
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, `CREATE ROLE `+role+` LOGIN PASSWORD 'pw'`)
	require.NoError(t, err)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), s.URL)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), `DROP DATABASE IF EXISTS `+dbName+` WITH (FORCE)`)
		_, _ = c.Exec(context.Background(), `DROP OWNED BY `+role+`; DROP ROLE `+role)
	})
}

// openAs opens database dbName as role (password "pw"), or as the
// server's superuser when role is "".
func openAs(t *testing.T, s *pgtest.Server, dbName, role string) *sql.DB {
	t.Helper()
	cfg, err := pgx.ParseConfig(s.URL)
	require.NoError(t, err)
	cfg.Database = dbName
	if role != "" {
		cfg.User, cfg.Password = role, "pw"
	}
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestMigrateRefusesAForeignSchemaOwner: the owner of the install schema
// may drop ulid_flake_state and make its own (another epoch, offset); a
// superuser installing in a schema another role owns (public of a
// database that role owns, or a schema of its own) is refused, by Migrate
// with ErrForeignOwner and by the plain files from version 5 on with
// 55U05. The schema's
// owner itself installs; a later change of the schema's owner is refused
// at the next Migrate.
func TestMigrateRefusesAForeignSchemaOwner(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		owner, other := "own_"+name, "oth_"+name
		loginRole(t, db.Server, owner, name)
		loginRole(t, db.Server, other, name)
		_, err := sdb.ExecContext(ctx, `ALTER DATABASE `+name+` OWNER TO `+owner)
		require.NoError(t, err)

		// public belongs to pg_database_owner, that is the database's owner.
		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, owner)
		var n int
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM pg_proc WHERE proname LIKE 'ulid_flake%'`).Scan(&n))
		require.Zero(t, n, "nothing installed")

		// The plain files, as psql or golang-migrate would run them.
		all, err := migrations.All()
		require.NoError(t, err)
		tx, err := sdb.BeginTx(ctx, nil)
		require.NoError(t, err)
		for _, m := range all {
			_, err = tx.ExecContext(ctx, m.Up)
			if m.Version < 5 {
				require.NoError(t, err, "version %d", m.Version)
			}
			if err != nil {
				break // later versions' files would see the aborted transaction
			}
		}
		require.Equal(t, "55U05", sqlCode(err), "%v", err)
		require.ErrorContains(t, err, "it is owned by "+owner)
		require.NoError(t, tx.Rollback())

		// A schema of its own, owned by another role: the same.
		_, err = sdb.ExecContext(ctx, `CREATE SCHEMA ids AUTHORIZATION `+other)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, other)

		// The schema's owner installs, and runs Migrate again.
		odb := openAs(t, db.Server, name, owner)
		_, err = migrations.Migrate(ctx, odb)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, odb)
		require.NoError(t, err)

		// The schema given to another role: the next Migrate refuses.
		_, err = sdb.ExecContext(ctx, `ALTER SCHEMA public OWNER TO `+other+`; GRANT CREATE, USAGE ON SCHEMA public TO `+owner)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, odb)
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, other)
	})
}

// TestSIDIsFixedByTheOwner: a role that may insert rows but not write the
// key cannot give them another node's SID, whatever it SETs; the SID the
// database and role settings gave sessions under version 4 is what
// version 5 fixes, and only the install's owner changes it.
func TestSIDIsFixedByTheOwner(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		ins := "ins_" + name
		loginRole(t, db.Server, ins, name)
		// Version 4 read the setting: a database whose sessions had SID 1.
		_, err := sdb.ExecContext(ctx, `ALTER DATABASE `+name+` SET ulid_flake.sid = 1`)
		require.NoError(t, err)
		// New connections read the database's setting.
		sdb = openAs(t, db.Server, name, "")
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		var sid sql.NullInt64
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT ulid_flake_node_sid()`).Scan(&sid))
		require.Equal(t, sql.NullInt64{Int64: 1, Valid: true}, sid, "the SID version 4 gave sessions")

		_, err = sdb.ExecContext(ctx, `CREATE TABLE notes (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable(), note text);
			GRANT USAGE ON SCHEMA public TO `+ins+`; GRANT INSERT (note) ON notes TO `+ins+`;
			ALTER ROLE `+ins+` IN DATABASE `+name+` SET ulid_flake.sid = 3`)
		require.NoError(t, err)
		idb := openAs(t, db.Server, name, ins)
		conn, err := idb.Conn(ctx)
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.ExecContext(ctx, `SET ulid_flake.sid = 2`)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `INSERT INTO notes (note) VALUES ('a')`)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `INSERT INTO notes (id, note) VALUES (ulid_flake_scalable(2), 'b')`)
		require.Equal(t, "42501", sqlCode(err), "it may not write the key: %v", err)
		_, err = conn.ExecContext(ctx, `SELECT ulid_flake_set_sid(2)`)
		require.Equal(t, "42501", sqlCode(err), "only the owner sets the SID: %v", err)
		_, err = idb.ExecContext(ctx, `INSERT INTO notes (note) VALUES ('c')`) // the role's own setting: 3
		require.NoError(t, err)

		rows, err := sdb.QueryContext(ctx, `SELECT id FROM notes`)
		require.NoError(t, err)
		ids := 0
		for rows.Next() {
			var id flake.ID
			require.NoError(t, rows.Scan(&id))
			require.Equal(t, 1, id.SID(), "%s", id)
			ids++
		}
		require.NoError(t, rows.Err())
		require.Equal(t, 2, ids)

		// The owner changes it; a Down to 4 is refused until the settings say it.
		_, err = sdb.ExecContext(ctx, `SELECT ulid_flake_set_sid(5)`)
		require.NoError(t, err)
		var got int64
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT ulid_flake_scalable()`).Scan(&got))
		require.Equal(t, 5, flake.ID(got).SID())
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.ErrorIs(t, err, migrations.ErrSID)
		require.ErrorContains(t, err, "ALTER ROLE "+ins+" IN DATABASE: 3")
		_, err = sdb.ExecContext(ctx, `ALTER ROLE `+ins+` IN DATABASE `+name+` RESET ulid_flake.sid; ALTER DATABASE `+name+` SET ulid_flake.sid = 5`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
	})
}

// TestSetEpochRefusedWhileRowsMayExist: ulid_flake_set_epoch without force
// is accepted only on an install that cannot have made IDs: it is refused
// when there is no state row (a schema-only dump restored and its data
// copied before Migrate ran), and when a column takes its default from the
// generators or the sequence, or is of the domain ulid_flake_id.
func TestSetEpochRefusedWhileRowsMayExist(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.EmptyDB(t, db.Server)
		_, err := migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		set := func(ms int64) error {
			_, err := sdb.ExecContext(ctx, `SELECT ulid_flake_set_epoch($1)`, ms)
			return err
		}
		require.NoError(t, set(1577836800000), "a fresh install")
		require.NoError(t, set(1704067200000))
		for _, ddl := range []string{
			`CREATE TABLE t (id bigint PRIMARY KEY DEFAULT ulid_flake())`,
			`CREATE TABLE t (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable(3))`,
			`CREATE TABLE t (id bigint PRIMARY KEY DEFAULT nextval('ulid_flake_seq'))`,
			`CREATE TABLE t (id ulid_flake_id PRIMARY KEY)`,
		} {
			_, err = sdb.ExecContext(ctx, ddl)
			require.NoError(t, err)
			err = set(1577836800000)
			require.Equal(t, "55000", sqlCode(err), "%s: %v", ddl, err)
			require.ErrorContains(t, err, "columns may hold IDs made under it: public.t.id", ddl)
			_, err = sdb.ExecContext(ctx, `DROP TABLE t`)
			require.NoError(t, err)
		}

		// A schema-only restore before Migrate: the table, no state row.
		_, err = sdb.ExecContext(ctx, `DELETE FROM ulid_flake_state`)
		require.NoError(t, err)
		err = set(1577836800000)
		require.Equal(t, "55000", sqlCode(err), "%v", err)
		require.ErrorContains(t, err, "ulid_flake_state has no row")
		_, err = sdb.ExecContext(ctx, `SELECT ulid_flake_set_epoch(1577836800000, force => true)`)
		require.NoError(t, err)
		var ms int64
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT ulid_flake_epoch_ms()`).Scan(&ms))
		require.EqualValues(t, 1577836800000, ms)
	})
}

// TestEpochChecksNeedTheConfigFile: version 5's checks compare the epoch
// it fixes with every source version 4 read, the server's configuration
// files among them. An installer who may not read them (pg_file_settings)
// is refused, the install and the Down, with an error that names them and
// the grants that let it proceed; with the grants it proceeds.
func TestEpochChecksNeedTheConfigFile(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		owner := "own_" + name
		loginRole(t, db.Server, owner, name)
		_, err := sdb.ExecContext(ctx, `ALTER DATABASE `+name+` OWNER TO `+owner)
		require.NoError(t, err)
		odb := openAs(t, db.Server, name, owner)
		_, err = migrations.Migrate(ctx, odb, migrations.WithTarget(4))
		require.NoError(t, err)
		_, err = odb.ExecContext(ctx, `SELECT ulid_flake() FROM generate_series(1, 10)`)
		require.NoError(t, err)

		_, err = migrations.Migrate(ctx, odb)
		require.ErrorIs(t, err, migrations.ErrEpoch)
		require.Equal(t, "42501", sqlCode(err), "%v", err)
		require.ErrorContains(t, err, "may not read the server's configuration files (pg_file_settings)")
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe)
		require.Contains(t, pe.Hint, "GRANT SELECT ON pg_catalog.pg_file_settings TO "+owner)

		grant := fmt.Sprintf(`GRANT SELECT ON pg_catalog.pg_file_settings TO %[1]s; GRANT EXECUTE ON FUNCTION pg_catalog.pg_show_all_file_settings() TO %[1]s`, owner)
		_, err = sdb.ExecContext(ctx, grant)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, odb)
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, strings.NewReplacer("GRANT", "REVOKE", " TO ", " FROM ").Replace(grant))
		require.NoError(t, err)

		// The Down to 4 checks the same sources.
		_, err = migrations.Migrate(ctx, odb, migrations.WithTarget(4))
		require.ErrorIs(t, err, migrations.ErrEpoch)
		require.Equal(t, "42501", sqlCode(err), "%v", err)
	})
}

// TestOwnerFunctionsRefuseAForeignState: a database handed to another role
// after a superuser installed in public gives that role the schema (public
// belongs to pg_database_owner). It may drop ulid_flake_nodes and make one
// whose trigger would run as the superuser who calls
// ulid_flake_check_node() at start-up, as the docs tell golang-migrate
// users to: the owner's functions check the rule first and refuse
// (55U05, naming the schema's owner and the table) before touching it,
// and Migrate returns ErrForeignOwner; nothing runs as the superuser.
func TestOwnerFunctionsRefuseAForeignState(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		owner := "hand_" + name
		loginRole(t, db.Server, owner, name)
		_, err := migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `ALTER DATABASE `+name+` OWNER TO `+owner)
		require.NoError(t, err)
		odb := openAs(t, db.Server, name, owner)
		_, err = odb.ExecContext(ctx, `DROP TABLE public.ulid_flake_nodes;
			CREATE TABLE public.ulid_flake_nodes (node_id uuid PRIMARY KEY, sid int, system_id bigint, database_oid oid, timeline int, written_at timestamptz);
			CREATE FUNCTION public.pwn() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF current_user = 'postgres' THEN EXECUTE 'ALTER ROLE `+owner+` SUPERUSER'; END IF; RETURN NEW; END $$;
			CREATE TRIGGER pwn BEFORE INSERT OR DELETE ON public.ulid_flake_nodes FOR EACH ROW EXECUTE FUNCTION public.pwn()`)
		require.NoError(t, err)
		for _, q := range []string{`SELECT public.ulid_flake_check_node()`, `SELECT public.ulid_flake_set_sid(1)`, `SELECT public.ulid_flake_set_epoch(1704067200000::bigint)`} {
			_, err = sdb.ExecContext(ctx, q)
			require.Equal(t, "55U05", sqlCode(err), "%s: %v", q, err)
			require.ErrorContains(t, err, "relation public.ulid_flake_nodes is owned by "+owner, q)
		}
		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		var super bool
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = $1`, owner).Scan(&super))
		require.False(t, super, "the planted trigger ran as the superuser")
	})
}

// TestOnlyTheOwnerWritesTheState: default privileges that grant every
// table and sequence of public to an application role are taken back from
// what the generators read at install; a grant made later is refused by
// the owner's functions and Migrate (42501, ErrForeignOwner) until it is
// revoked, so that no other role can change the offset or epoch that the
// C extension reads, or the mesh's rows.
func TestOnlyTheOwnerWritesTheState(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		rw := "rw_" + name
		loginRole(t, db.Server, rw, name)
		_, err := sdb.ExecContext(ctx, `GRANT USAGE ON SCHEMA public TO `+rw+`;
			ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO `+rw+`;
			ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON SEQUENCES TO `+rw)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		rdb := openAs(t, db.Server, name, rw)
		for _, q := range []string{
			`UPDATE ulid_flake_state SET "offset" = 0`,
			`DELETE FROM ulid_flake_nodes`,
			`SELECT setval('ulid_flake_seq', 1)`,
		} {
			_, err = rdb.ExecContext(ctx, q)
			require.Equal(t, "42501", sqlCode(err), "%s: %v", q, err)
		}
		var n int64
		require.NoError(t, rdb.QueryRowContext(ctx, `SELECT ulid_flake()`).Scan(&n), "the generators still work for it")

		_, err = sdb.ExecContext(ctx, `GRANT UPDATE ON ulid_flake_state TO `+rw)
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `SELECT ulid_flake_check_node()`)
		require.Equal(t, "42501", sqlCode(err), "%v", err)
		require.ErrorContains(t, err, "UPDATE on public.ulid_flake_state to "+rw)
		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		_, err = sdb.ExecContext(ctx, `REVOKE UPDATE ON ulid_flake_state FROM `+rw)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)

		// A trigger runs as whoever writes the row (the owner's functions):
		// TRIGGER, a column's UPDATE, and a trigger left behind are refused.
		for _, tc := range []struct{ grant, want string }{
			{`GRANT TRIGGER ON ulid_flake_state TO ` + rw, "TRIGGER on public.ulid_flake_state to " + rw},
			{`GRANT UPDATE (epoch_ms) ON ulid_flake_state TO ` + rw, "UPDATE on public.ulid_flake_state.epoch_ms to " + rw},
			{`GRANT INSERT (sid) ON ulid_flake_nodes TO ` + rw, "INSERT on public.ulid_flake_nodes.sid to " + rw},
		} {
			_, err = sdb.ExecContext(ctx, tc.grant)
			require.NoError(t, err)
			_, err = sdb.ExecContext(ctx, `SELECT ulid_flake_check_node()`)
			require.Equal(t, "42501", sqlCode(err), "%s: %v", tc.grant, err)
			require.ErrorContains(t, err, tc.want)
			_, err = sdb.ExecContext(ctx, `REVOKE ALL ON ulid_flake_state, ulid_flake_nodes FROM `+rw)
			require.NoError(t, err)
		}
		_, err = sdb.ExecContext(ctx, `CREATE FUNCTION noop() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
			CREATE TRIGGER left_behind BEFORE UPDATE ON ulid_flake_state FOR EACH ROW EXECUTE FUNCTION noop()`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.ErrorContains(t, err, "trigger left_behind on public.ulid_flake_state")
		_, err = sdb.ExecContext(ctx, `DROP TRIGGER left_behind ON ulid_flake_state`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
	})
}

// TestSIDUpgradeReadsEverySource: version 5 fixes the SID version 4 gave
// the database's sessions; a migrator whose connection says another (its
// options, copied from another node) is refused with ErrSID instead of
// fixing that one.
func TestSIDUpgradeReadsEverySource(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		_, err := migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `ALTER DATABASE `+name+` SET ulid_flake.sid = 1`)
		require.NoError(t, err)
		cfg, err := pgx.ParseConfig(db.Server.URL)
		require.NoError(t, err)
		cfg.Database = name
		cfg.RuntimeParams["ulid_flake.sid"] = "3"
		odb := stdlib.OpenDB(*cfg)
		defer odb.Close()
		_, err = migrations.Migrate(ctx, odb)
		require.ErrorIs(t, err, migrations.ErrSID)
		require.ErrorContains(t, err, "this session's start")
		require.ErrorContains(t, err, ": 3")

		ndb := openAs(t, db.Server, name, "")
		_, err = migrations.Migrate(ctx, ndb)
		require.NoError(t, err)
		var sid int
		require.NoError(t, ndb.QueryRowContext(ctx, `SELECT ulid_flake_node_sid()`).Scan(&sid))
		require.Equal(t, 1, sid)
	})
}

// TestMeshSeesDomainDefaults: a published table whose key takes the
// stand-alone generator through its domain's default is refused like a
// column default, while the node has a SID.
func TestMeshSeesDomainDefaults(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db) // migrated by the template
		_, err := sdb.ExecContext(ctx, `SELECT ulid_flake_set_sid(1);
			CREATE DOMAIN key_id AS bigint DEFAULT ulid_flake();
			CREATE TABLE t (id key_id PRIMARY KEY, v int);
			CREATE PUBLICATION p FOR TABLE t`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrMesh)
		require.ErrorContains(t, err, "t.id take their default from ulid_flake()")
	})
}

// TestPlantedOverloadsNeverRun: a role with CREATE on the install schema
// at version 4 plants overloads that would match the calls of version 5's
// file better than the real ones (text where the file passes a name, a
// defaulted argument more): none runs as the superuser who migrates.
// Migrate refuses them (ErrForeignOwner), and so does the plain file, as
// psql runs it (55U05), before it calls anything. On a full install a
// CREATE granted later makes the owner's functions refuse (55U05) before
// they read or call anything.
func TestPlantedOverloadsNeverRun(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb, name := itest.EmptyDBNamed(t, db.Server)
		mallory := "mal_" + name
		loginRole(t, db.Server, mallory, name)
		_, err := sdb.ExecContext(ctx, `CREATE SCHEMA ids`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"), migrations.WithTarget(4))
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `GRANT USAGE, CREATE ON SCHEMA ids TO `+mallory)
		require.NoError(t, err)
		escalate := `BEGIN IF current_setting('is_superuser') = 'on' THEN EXECUTE 'ALTER ROLE ` + mallory + ` SUPERUSER'; END IF; END`
		mdb := openAs(t, db.Server, name, mallory)
		_, err = mdb.ExecContext(ctx, `CREATE FUNCTION ids.ulid_flake_alone(s text) RETURNS void LANGUAGE plpgsql AS $$`+escalate+`$$;
			CREATE FUNCTION ids.ulid_flake_settings(g text, x int DEFAULT 0) RETURNS TABLE (who text, per_role boolean, rank integer, value text) LANGUAGE plpgsql AS $$`+escalate+`$$`)
		require.NoError(t, err)

		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.ErrorIs(t, err, migrations.ErrForeignOwner)
		require.False(t, isSuper(t, sdb, mallory))

		// The plain file, as psql runs it.
		all, err := migrations.All()
		require.NoError(t, err)
		tx, err := sdb.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = tx.ExecContext(ctx, `SET LOCAL search_path = ids`)
		require.NoError(t, err)
		_, err = tx.ExecContext(ctx, all[4].Up)
		require.Equal(t, "55U05", sqlCode(err), "%v", err)
		require.NoError(t, tx.Rollback())
		require.False(t, isSuper(t, sdb, mallory), "a planted function ran")

		// A full install, then CREATE for mallory and a planted overload of
		// what the owner's functions call.
		_, err = sdb.ExecContext(ctx, `REVOKE CREATE ON SCHEMA ids FROM `+mallory+`; DROP OWNED BY `+mallory)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("ids"))
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `GRANT CREATE ON SCHEMA ids TO `+mallory)
		require.NoError(t, err)
		_, err = mdb.ExecContext(ctx, `CREATE FUNCTION ids.ulid_flake_node_sync(mode text, x text) RETURNS boolean LANGUAGE plpgsql AS $$`+
			strings.Replace(escalate, "END IF; END", "END IF; RETURN false; END", 1)+`$$`)
		require.NoError(t, err)
		_, err = sdb.ExecContext(ctx, `SELECT ids.ulid_flake_check_node()`)
		require.Equal(t, "55U05", sqlCode(err), "%v", err)
		require.ErrorContains(t, err, "function ids.ulid_flake_node_sync(text,text) is owned by "+mallory)
		require.False(t, isSuper(t, sdb, mallory))
	})
}
