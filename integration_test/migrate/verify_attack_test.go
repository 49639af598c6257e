package migrate_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// verifyDB makes a database of its own on s, installed by the server's
// superuser, with a SID, a table item whose DEFAULT is
// ulid_flake_scalable(), and a login role that may insert there and
// nothing else. It returns the database's name, the owner's and the role's
// connections, and unchecked, which makes the ID functions' bodies hold no
// server start (as after a restart: the next ID runs the check).
func verifyDB(t *testing.T, s *pgtest.Server, suffix string) (dbName string, owner, app *sql.DB, unchecked func()) {
	t.Helper()
	ctx := context.Background()
	dbName = pgtest.UniqueName() + suffix
	role := dbName + "_app"
	loginRole(t, s, role, dbName)
	admin := openAs(t, s, "postgres", "")
	_, err := admin.ExecContext(ctx, `CREATE DATABASE `+dbName)
	require.NoError(t, err)
	owner = openAs(t, s, dbName, "")
	_, err = migrations.Migrate(ctx, owner)
	require.NoError(t, err)
	_, err = owner.ExecContext(ctx, `SELECT ulid_flake_set_sid(1);
		CREATE TABLE item (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable(), v int);
		GRANT USAGE ON SCHEMA public TO `+role+`; GRANT INSERT, SELECT ON item TO `+role)
	require.NoError(t, err)
	app = openAs(t, s, dbName, role)
	unchecked = func() {
		t.Helper()
		_, err := owner.ExecContext(ctx, `UPDATE ulid_flake_state SET started_at = NULL;
			SELECT ulid_flake_build("offset") FROM ulid_flake_state`)
		require.NoError(t, err)
	}
	return dbName, owner, app, unchecked
}

// TestTemplateCopyOnTheSameServerIsChecked: CREATE DATABASE ... TEMPLATE
// (or a dump restored into another database of the same server) copies the
// ID functions' bodies with the server start they were checked on, which is
// this server's: the copy's first ID must still be refused (55000: its
// state was recorded on another database) until its offset is drawn, as a
// copy on another server is; not made with the source's offset and SID.
func TestTemplateCopyOnTheSameServerIsChecked(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dbName, owner, _, _ := verifyDB(t, s, "_tmplsrc")
			_, err := owner.ExecContext(ctx, `INSERT INTO item (v) VALUES (1)`)
			require.NoError(t, err)
			require.NoError(t, owner.Close())
			admin := openAs(t, s, "postgres", "")
			copyName := dbName + "_copy"
			_, err = admin.ExecContext(ctx, `CREATE DATABASE `+copyName+` TEMPLATE `+dbName)
			require.NoError(t, err)
			t.Cleanup(func() {
				_, _ = admin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+copyName+` WITH (FORCE)`)
			})

			cp := openAs(t, s, copyName, "")
			var id int64
			err = cp.QueryRowContext(ctx, `SELECT ulid_flake_scalable()`).Scan(&id)
			requireState(t, err, "55000", "this database's state was recorded on system")
			requireState(t, execErr(ctx, cp, `INSERT INTO item (v) VALUES (2)`), "55000", "this database's state was recorded on system")

			_, err = migrations.Migrate(ctx, cp)
			require.NoError(t, err, "Migrate draws the copy's offset")
			require.NoError(t, execErr(ctx, cp, `INSERT INTO item (v) VALUES (3)`))
		})
	}
}

// TestVerifyLockHeldByAnyRoleStallsNoWriter: after a server start, the
// first ID's check takes the state's row lock until its transaction ends.
// A role with no privilege beyond CONNECT can call ulid_flake_verify (or
// cast to ulid_flake_verified) in a transaction it keeps open: no other
// session may then make an ID. The application's INSERT must not wait for
// a transaction it does not own.
func TestVerifyLockHeldByAnyRoleStallsNoWriter(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dbName, _, app, unchecked := verifyDB(t, s, "_stall")
			nobody := dbName + "_nobody"
			loginRole(t, s, nobody, dbName+"_none")
			stranger := openAs(t, s, dbName, nobody)
			unchecked()

			tx, err := stranger.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer tx.Rollback() //nolint:errcheck
			_, err = tx.ExecContext(ctx, `SELECT true::ulid_flake_verified`)
			require.NoError(t, err, "any role may run the check")

			short, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			_, err = app.ExecContext(short, `INSERT INTO item (v) VALUES (1)`)
			require.NoError(t, err, "an INSERT waits on a transaction of a role with no privilege")
		})
	}
}

// TestRepeatableReadWaitsForTheFirstCheck: sessions that make an ID while
// the first check after a server start runs wait for it (deployments.md).
// Under REPEATABLE READ (or SERIALIZABLE), even a single INSERT in its own
// transaction, the wait ends in 40001 (could not serialize access due to
// concurrent update: the check locks the state row another session
// updated): the INSERT must succeed as under READ COMMITTED.
func TestRepeatableReadWaitsForTheFirstCheck(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, owner, app, unchecked := verifyDB(t, s, "_rr")
			for _, iso := range []sql.IsolationLevel{sql.LevelRepeatableRead, sql.LevelSerializable} {
				unchecked()
				first, err := owner.BeginTx(ctx, nil)
				require.NoError(t, err)
				_, err = first.ExecContext(ctx, `INSERT INTO item (v) VALUES (1)`)
				require.NoError(t, err, "the first ID after the start runs the check")

				done := make(chan error, 1)
				go func() {
					tx, err := app.BeginTx(ctx, &sql.TxOptions{Isolation: iso})
					if err == nil {
						_, err = tx.ExecContext(ctx, `INSERT INTO item (v) VALUES (2)`)
						if err == nil {
							err = tx.Commit()
						} else {
							_ = tx.Rollback()
						}
					}
					done <- err
				}()
				time.Sleep(500 * time.Millisecond)
				require.NoError(t, first.Commit())
				require.NoError(t, <-done, "%v: the waiting INSERT", iso)
			}
		})
	}
}

// TestFirstCheckKeepsTheStartUnderAnySettings: the first ID's check writes
// the server start into the ID functions' bodies as a literal. The session
// that runs it is any role's, with its own DateStyle and TimeZone (ALTER
// ROLE ... SET, or SET): under DateStyle Postgres the start is written
// with the zone's abbreviation, which PostgreSQL before 18 may read as
// another zone's (IST: Israel, not India). The bodies must hold the start
// itself, else every later ID runs the check again until the next start.
func TestFirstCheckKeepsTheStartUnderAnySettings(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, owner, app, unchecked := verifyDB(t, s, "_style")
			for _, set := range []string{
				`SET DateStyle = 'Postgres, DMY'; SET TimeZone = 'Asia/Kolkata'`,
				`SET DateStyle = 'SQL, MDY'; SET TimeZone = 'America/Sao_Paulo'`,
				`SET DateStyle = 'German'; SET TimeZone = 'Australia/Adelaide'`,
			} {
				unchecked()
				conn, err := app.Conn(ctx)
				require.NoError(t, err)
				_, err = conn.ExecContext(ctx, set)
				require.NoError(t, err)
				_, err = conn.ExecContext(ctx, `INSERT INTO item (v) VALUES (1)`)
				require.NoError(t, err, set)
				_, err = conn.ExecContext(ctx, `RESET DateStyle; RESET TimeZone`)
				require.NoError(t, err)
				require.NoError(t, conn.Close())
				var holds bool
				require.NoError(t, owner.QueryRowContext(ctx, `SELECT substring(pg_get_functiondef('ulid_flake_scalable(integer)'::regprocedure)
					FROM $$pg_postmaster_start_time\(\) = '([^']*)'$$)::timestamptz = pg_postmaster_start_time()`).Scan(&holds))
				require.True(t, holds, "%s: the bodies hold the server start", set)
			}
		})
	}
}

// TestCheckWithoutTheLockStillRefuses: a first ID that may not lock the
// state row (another transaction holds it) runs the checks all the same:
// a copy of node 1 on another timeline, beside another node's row, makes
// no ID (55U01) and draws no sequence value, under READ COMMITTED and
// REPEATABLE READ.
func TestCheckWithoutTheLockStillRefuses(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, owner, app, unchecked := verifyDB(t, s, "_nolock")
			_, err := owner.ExecContext(ctx, `INSERT INTO ulid_flake_nodes VALUES ('00000000-0000-4000-8000-000000000002', 2, 1, 1, 1, now());
				UPDATE ulid_flake_nodes SET timeline = timeline + 1 WHERE node_id = (SELECT node_id FROM ulid_flake_state)`)
			require.NoError(t, err)
			unchecked()
			var before, after int64
			require.NoError(t, owner.QueryRowContext(ctx, `SELECT last_value FROM ulid_flake_seq`).Scan(&before))
			holder, err := owner.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer holder.Rollback() //nolint:errcheck
			_, err = holder.ExecContext(ctx, `SELECT FROM ulid_flake_state FOR UPDATE`)
			require.NoError(t, err)
			for _, iso := range []sql.IsolationLevel{sql.LevelReadCommitted, sql.LevelRepeatableRead} {
				short, cancel := context.WithTimeout(ctx, 5*time.Second)
				tx, err := app.BeginTx(short, &sql.TxOptions{Isolation: iso})
				require.NoError(t, err)
				_, err = tx.ExecContext(short, `INSERT INTO item (v) VALUES (1)`)
				requireState(t, err, "55U01", "this database is a copy of node")
				require.NoError(t, tx.Rollback())
				cancel()
			}
			require.NoError(t, holder.Rollback())
			require.NoError(t, owner.QueryRowContext(ctx, `SELECT last_value FROM ulid_flake_seq`).Scan(&after))
			require.Equal(t, before, after, "no sequence value drawn")
		})
	}
}

// TestRestartAfterAPeersSlotWasDroppedRefusesUntilRetired: node 1 of a
// two-node mesh recorded the slot its peer read from; the peer is down for
// a rebuild, or leaving, and its slot on node 1 was dropped (DROP
// SUBSCRIPTION on the peer, or pg_drop_replication_slot so that WAL is not
// kept for it). Node 1 restarts before the peer's row is retired: from
// inside, it looks exactly like a copy of itself started on its own (the
// same system, database and timeline, none of the slots), so its first ID
// is refused (55U01), with a hint that names ulid_flake_retire_node; once
// the operator retires the peer (or it subscribes again), it makes IDs.
func TestRestartAfterAPeersSlotWasDroppedRefusesUntilRetired(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, owner, app, unchecked := verifyDB(t, s, "_slot")
			// What node 1's last check recorded: the peer's row, and the slot
			// the peer read from here (dropped since).
			_, err := owner.ExecContext(ctx, `INSERT INTO ulid_flake_nodes VALUES ('00000000-0000-4000-8000-000000000002', 2, 1, 1, 1, now());
				UPDATE ulid_flake_nodes SET slots = '{node2_sub}' WHERE node_id = (SELECT node_id FROM ulid_flake_state)`)
			require.NoError(t, err)
			unchecked()
			err = execErr(ctx, app, `INSERT INTO item (v) VALUES (1)`)
			requireState(t, err, "55U01", "without the replication slots its peers read from (node2_sub)")
			var pgErr *pgconn.PgError
			require.ErrorAs(t, err, &pgErr)
			require.Contains(t, pgErr.Hint, "ulid_flake_retire_node", "the hint names the way out")
			_, err = owner.ExecContext(ctx, `SELECT ulid_flake_retire_node('00000000-0000-4000-8000-000000000002')`)
			require.NoError(t, err)
			require.NoError(t, execErr(ctx, app, `INSERT INTO item (v) VALUES (1)`), "the peer retired")
		})
	}
}

// TestForeignPublicationStopsNoOtherTable: a role that may create in the
// database (a schema and a publication of its own) publishes its own
// table whose DEFAULT is ulid_flake(), on a node with a SID. Migrate refuses
// that (55U04, naming the column), and ulid_flake() refuses each call there;
// but the first ID after a server start, whoever makes it and for whatever
// table, must not be refused for another role's table: else any such role
// stops every insert of the node at its next restart.
func TestForeignPublicationStopsNoOtherTable(t *testing.T) {
	t.Parallel()
	for _, s := range pgtest.Servers(t) {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dbName, owner, app, unchecked := verifyDB(t, s, "_pub")
			tenant := dbName + "_tenant"
			loginRole(t, s, tenant, dbName+"_none")
			_, err := owner.ExecContext(ctx, `GRANT CREATE ON DATABASE `+dbName+` TO `+tenant)
			require.NoError(t, err)
			other := openAs(t, s, dbName, tenant)
			_, err = other.ExecContext(ctx, `CREATE SCHEMA tenant;
				CREATE TABLE tenant.legacy (id bigint PRIMARY KEY DEFAULT public.ulid_flake(), v int);
				CREATE PUBLICATION tenant_pub FOR TABLE tenant.legacy`)
			require.NoError(t, err)
			t.Cleanup(func() { _, _ = owner.ExecContext(context.Background(), `DROP PUBLICATION IF EXISTS tenant_pub`) })
			unchecked()
			require.NoError(t, execErr(ctx, app, `INSERT INTO item (v) VALUES (1)`), "the application's table, after a restart")
			requireState(t, execErr(ctx, other, `INSERT INTO tenant.legacy (v) VALUES (1)`), "55U04", "ulid_flake_scalable()")
		})
	}
}
