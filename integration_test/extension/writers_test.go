package extension_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestExtensionStateWriters: the module refuses (55000) a ulid_flake_state
// that a role other than its owner and superusers may write (INSERT,
// UPDATE, DELETE, TRUNCATE or TRIGGER on the table, INSERT or UPDATE on a
// column it reads; PUBLIC counts), naming the table and those roles, with
// a REVOKE as the hint; in a session that made IDs before as in a new one;
// and a state table with a trigger.
//
//   - GRANT ... ON ALL TABLES IN SCHEMA public TO app_rw after the install:
//     refused, before and after app_rw rewrites the state (offset 0, a 2020
//     epoch, which would make IDs that read 2030); once revoked and the
//     state restored, read again with the install's offset and epoch.
//   - SELECT alone, and writes granted to a superuser role: read.
//   - UPDATE granted to PUBLIC, UPDATE of the column offset, INSERT of the
//     column epoch_ms, TRIGGER: refused; a trigger app_rw made while it
//     held TRIGGER: refused after the REVOKE, until it is dropped.
//   - ALTER DEFAULT PRIVILEGES IN SCHEMA ids GRANT ... ON TABLES TO app_rw
//     before an install of version 4 in ids (5 revokes such grants when
//     it runs): refused.
func TestExtensionStateWriters(t *testing.T) {
	t.Parallel()
	run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		exec := func(q string) { t.Helper(); _, err := db.Exec(ctx, q); require.NoError(t, err, q) }
		rw, su := "rw_"+db.Name, "su_"+db.Name
		exec(fmt.Sprintf(`CREATE ROLE %[1]s LOGIN PASSWORD 'pw'; CREATE ROLE %[2]s SUPERUSER`, rw, su))
		t.Cleanup(func() {
			_, _ = db.Exec(context.Background(), fmt.Sprintf(`DROP OWNED BY %[1]s, %[2]s; DROP ROLE %[1]s, %[2]s`, rw, su))
		})
		e2020, err := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
		require.NoError(t, err)
		before, err := pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		defer before.Close(ctx)
		off := offsetOf(t, ctx, before)
		call := func(c *pgx.Conn, schema string) error {
			var id int64
			return c.QueryRow(ctx, fmt.Sprintf(`SELECT %[1]s.ulid_flake_next(nextval('%[1]s.ulid_flake_seq'))`, schema)).Scan(&id)
		}
		works := func() {
			t.Helper()
			checkState(t, before, off, flake.DefaultEpoch())
			c, err := pgx.Connect(ctx, db.URL)
			require.NoError(t, err)
			defer c.Close(ctx)
			checkState(t, c, off, flake.DefaultEpoch())
		}
		refused := func(schema, who string, conns ...*pgx.Conn) {
			t.Helper()
			fresh, err := pgx.Connect(ctx, db.URL)
			require.NoError(t, err)
			defer fresh.Close(ctx)
			for _, c := range append([]*pgx.Conn{before, fresh}, conns...) {
				err := call(c, schema)
				require.Equal(t, "55000", sqlState(err), "%v", err)
				var pe *pgconn.PgError
				require.ErrorAs(t, err, &pe)
				require.Contains(t, pe.Message, schema+".ulid_flake_state")
				require.Contains(t, pe.Message, who)
				require.Contains(t, pe.Hint, fmt.Sprintf("REVOKE INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER ON %s.ulid_flake_state FROM %s", schema, who))
			}
		}
		works()

		// Writes granted on every table of public after the install.
		exec(fmt.Sprintf(`GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA public TO %s;
			GRANT USAGE ON SEQUENCE ulid_flake_seq TO %[1]s`, rw))
		rc := connectAs(t, db, rw)
		refused("public", rw, rc)
		_, err = rc.Exec(ctx, fmt.Sprintf(`UPDATE ulid_flake_state SET epoch_ms = %d, "offset" = 0`, e2020.UnixMilli()))
		require.NoError(t, err, "app_rw may write the state: the attack is real")
		refused("public", rw, rc)
		exec(fmt.Sprintf(`UPDATE ulid_flake_state SET epoch_ms = %d, "offset" = %d`, flake.DefaultEpoch().UnixMilli(), off))
		exec(fmt.Sprintf(`REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ulid_flake_state FROM %s`, rw))
		works()
		require.NoError(t, call(rc, "public"), "app_rw keeps SELECT")

		// A superuser role's grant: read.
		exec(fmt.Sprintf(`GRANT INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER ON ulid_flake_state TO %s`, su))
		works()

		// PUBLIC, a column the module reads, TRIGGER.
		for _, g := range []struct{ grant, who string }{
			{`GRANT UPDATE ON ulid_flake_state TO PUBLIC`, "PUBLIC"},
			{fmt.Sprintf(`GRANT UPDATE ("offset") ON ulid_flake_state TO %s`, rw), rw},
			{fmt.Sprintf(`GRANT INSERT (epoch_ms) ON ulid_flake_state TO %s`, rw), rw},
			{fmt.Sprintf(`GRANT TRIGGER ON ulid_flake_state TO %s`, rw), rw},
		} {
			exec(g.grant)
			refused("public", g.who)
			exec(fmt.Sprintf(`REVOKE INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER ON public.ulid_flake_state FROM %s`, g.who))
			works()
		}

		// A trigger made while TRIGGER was granted outlives the REVOKE: the
		// table is refused while it has one.
		exec(fmt.Sprintf(`GRANT TRIGGER ON ulid_flake_state TO %[1]s; CREATE SCHEMA fn_%[1]s AUTHORIZATION %[1]s`, rw))
		_, err = rc.Exec(ctx, fmt.Sprintf(`CREATE FUNCTION fn_%[1]s.keep() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
			CREATE TRIGGER keep BEFORE UPDATE ON public.ulid_flake_state FOR EACH ROW EXECUTE FUNCTION fn_%[1]s.keep()`, rw))
		require.NoError(t, err)
		exec(fmt.Sprintf(`REVOKE TRIGGER ON ulid_flake_state FROM %s`, rw))
		for _, c := range []*pgx.Conn{before, rc} {
			err := call(c, "public")
			require.Equal(t, "55000", sqlState(err), "%v", err)
			require.ErrorContains(t, err, "public.ulid_flake_state has triggers (keep)")
		}
		exec(`DROP TRIGGER keep ON ulid_flake_state`)
		works()

		// Default privileges that grant writes on the tables an install
		// makes. Migration 5 takes such grants back when it runs, so the
		// install stops at 4 (the state the module reads from 4 on).
		exec(fmt.Sprintf(`CREATE SCHEMA ids;
			ALTER DEFAULT PRIVILEGES IN SCHEMA ids GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO %s`, rw))
		_, err = migrations.Migrate(ctx, itest.StdDB(t, db), migrations.WithSchema("ids"), migrations.WithTarget(4))
		require.NoError(t, err)
		exec(`DROP EXTENSION ulid_flake_ext; CREATE EXTENSION ulid_flake_ext SCHEMA ids`)
		refused("ids", rw)
		exec(fmt.Sprintf(`REVOKE INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER ON ids.ulid_flake_state FROM %s`, rw))
		require.NoError(t, call(before, "ids"))
	})
}
