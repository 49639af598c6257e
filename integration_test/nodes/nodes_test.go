package nodes_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// install is a database of its own: a clone of the migrated template, on
// which Migrate draws the database's own offset, with SID sid (-1: none).
type install struct {
	db  *pgtest.DB
	sdb *sql.DB
}

func newInstall(t *testing.T, s *pgtest.Server, sid int) install {
	t.Helper()
	ctx := context.Background()
	db := s.NewDB(t)
	sdb := itest.StdDB(t, db)
	_, err := migrations.Migrate(ctx, sdb)
	require.NoError(t, err)
	if sid >= 0 {
		_, err = sdb.Exec(`SELECT ulid_flake_set_sid($1::integer)`, sid)
		require.NoError(t, err)
	}
	return install{db, sdb}
}

// row returns the line of the output that lists the database in.
func (in install) row(t *testing.T, stdout string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\d+ +` + in.db.Name + ` .*$`).FindString(stdout)
	require.NotEmpty(t, m, "no row for %s:\n%s", in.db.Name, stdout)
	return m
}

// Two databases installed separately, with SIDs 1 and 2, pass: one row
// each, with the database, the server's system identifier, the schema, the
// layout, the SID, the epoch and the offset Migrate drew for it. The same
// database given twice is one database, not a pair.
func TestNodesDistinctSIDsPass(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		a, b := newInstall(t, db.Server, 1), newInstall(t, db.Server, 2)
		code, stdout, stderr := itest.RunBin(t, bin, "nodes", "-timeout", "2m", a.db.URL, b.db.URL, a.db.URL)
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		require.Empty(t, stderr)
		require.Len(t, strings.Split(strings.TrimSpace(stdout), "\n"), 4, stdout)
		for sid, in := range []install{a, b} {
			var system, offset string
			require.NoError(t, in.sdb.QueryRow(`SELECT c.system_identifier::text, s."offset"::text
				FROM pg_control_system() c, public.ulid_flake_state s`).Scan(&system, &offset))
			want := fmt.Sprintf(`^\d +%s +%s +public +scalable +%d +2024-01-01T00:00:00.000Z +%s$`, in.db.Name, system, sid+1, offset)
			require.Regexp(t, want, in.row(t, stdout))
		}
	})
}

// Two databases whose IDs could collide once their rows meet are refused,
// exit 1, naming the pair, why and the fix, after every row is printed:
// one SID on both; no SID (stand-alone IDs) on both, or on one; a SID with
// a column whose DEFAULT is ulid_flake(), which ignores it; two epochs.
func TestNodesRefusesOverlaps(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		s := db.Server
		a, b, withDefault := newInstall(t, s, -1), newInstall(t, s, -1), newInstall(t, s, 7)
		_, err := withDefault.sdb.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT ulid_flake())`)
		require.NoError(t, err)
		sids := func(sa, sb any) {
			for _, x := range []struct {
				in  install
				sid any
			}{{a, sa}, {b, sb}} {
				_, err := x.in.sdb.Exec(`SELECT ulid_flake_set_sid($1::integer)`, x.sid)
				require.NoError(t, err)
			}
		}
		for _, tc := range []struct {
			name  string
			setup func()
			b     *install
			want  []string
		}{
			{"one SID", func() { sids(4, 4) }, &b, []string{"both make IDs with SID 4", "ulid_flake_set_sid"}},
			{"stand-alone on both", func() { sids(nil, nil) }, &b,
				[]string{"URL 1 has no SID, URL 2 has no SID: stand-alone IDs of two databases can be equal, whatever their offsets", "ulid_flake_scalable()"}},
			{"stand-alone on one", func() { sids(3, nil) }, &b, []string{"URL 2 has no SID: stand-alone"}},
			{"a stand-alone default", func() { sids(8, 9) }, &withDefault, []string{"URL 2 has DEFAULT ulid_flake() (no SID) on public.orders.id"}},
			{"two epochs", func() {
				_, err := b.sdb.Exec(`SELECT ulid_flake_set_epoch(1420070400000::bigint)`)
				require.NoError(t, err)
			}, &b, []string{"epochs 2024-01-01T00:00:00.000Z and 2015-01-01T00:00:00.000Z", "ulid_flake_set_epoch"}},
		} {
			tc.setup()
			code, stdout, stderr := itest.RunBin(t, bin, "nodes", "-timeout", "2m", a.db.URL, tc.b.db.URL)
			require.Equal(t, 1, code, "%s: stdout:\n%s\nstderr:\n%s", tc.name, stdout, stderr)
			a.row(t, stdout)
			tc.b.row(t, stdout)
			require.Contains(t, stderr, "IDs of these databases can collide once their rows meet", tc.name)
			require.Contains(t, stderr, fmt.Sprintf("URL 1 (database %s, schema public) and URL 2 (database %s, schema public)", a.db.Name, tc.b.db.Name), tc.name)
			for _, w := range tc.want {
				require.Contains(t, stderr, w, tc.name)
			}
			require.Equal(t, 1, strings.Count(stderr, " and URL 2 ("), "%s: one problem:\n%s", tc.name, stderr)
		}
		_, stdout, _ := itest.RunBin(t, bin, "nodes", "-timeout", "2m", a.db.URL, b.db.URL)
		require.Regexp(t, ` +public +scalable +8 `, a.row(t, stdout))
		require.Regexp(t, ` +public +scalable +9 +2015-01-01T00:00:00.000Z `, b.row(t, stdout))
		sids(nil, nil)
		_, stdout, _ = itest.RunBin(t, bin, "nodes", "-timeout", "2m", a.db.URL)
		require.Regexp(t, ` +public +stand-alone +- +2024-01-01T00:00:00.000Z +\d+$`, a.row(t, stdout))
	})
}

// A database with no install is an error that says so and how to install
// (migrations.ErrNotInstalled's message), and one that cannot be reached
// is named by its place; the other databases' rows are printed, exit 1.
// An install schema's name reaches SQL as a bind parameter only: a hostile
// one is read as any other.
func TestNodesNotInstalledAndHostileSchema(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		s := db.Server
		name := db.Name + "_empty" // template0's clone: nothing installed
		_, err := db.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE template0`)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
		u, err := url.Parse(db.URL)
		require.NoError(t, err)
		u.Path = "/" + name
		emptyURL := u.String()

		schema := `x';END IF;DROP TABLE victim;--`
		hostile := newInstall(t, s, 5)
		_, err = hostile.sdb.Exec(`CREATE SCHEMA ` + itest.QuoteIdent(schema))
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, hostile.sdb, migrations.WithSchema(schema))
		require.NoError(t, err)
		_, err = hostile.sdb.Exec(`SELECT ` + itest.QuoteIdent(schema) + `.ulid_flake_set_sid(6)`)
		require.NoError(t, err)

		code, stdout, stderr := itest.RunBin(t, bin, "nodes", "-timeout", "2m", hostile.db.URL, emptyURL, "postgres://x@127.0.0.1:1/x?connect_timeout=5")
		require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		require.Contains(t, stderr, "URL 2: "+migrations.ErrNotInstalled.Error()+": database "+name+" has ulid_flake() in no schema")
		require.Contains(t, stderr, "ulidflake migrations up")
		require.Contains(t, stderr, "URL 3: cannot connect")
		require.NotContains(t, stderr, "can collide", "two installs with SIDs 5 and 6")
		require.Regexp(t, `(?m)^1 +`+hostile.db.Name+` +\d+ +public +scalable +5 `, stdout)
		require.Regexp(t, `(?m)^1 +`+hostile.db.Name+` +\d+ +`+regexp.QuoteMeta(schema)+` +scalable +6 `, stdout)
	})
}

// A clone of an install that Migrate has not seen since (CREATE DATABASE
// … TEMPLATE) shows the offset it came with, and says so; a role that may
// not read ulid_flake_state (not the install's owner) gets every other
// column, and is told who may read the offset.
func TestNodesReadsWhatItMay(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		clone := db.Server.NewDB(t)
		// The state of the template it came from, before the harness's check.
		_, err := clone.Exec(ctx, `UPDATE ulid_flake_state SET database_oid = 1`)
		require.NoError(t, err)
		code, stdout, stderr := itest.RunBin(t, bin, "nodes", "-timeout", "2m", clone.URL)
		require.Equal(t, 0, code, stderr)
		require.Regexp(t, `(?m)^1 +`+clone.Name+` +\d+ +public +stand-alone +- +2024-01-01T00:00:00.000Z +\d+ \(drawn on another database: run Migrate\)$`, stdout)

		role := "nodes_" + clone.Name
		_, err = clone.Exec(ctx, `CREATE ROLE `+role+` LOGIN PASSWORD 'x'`)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP ROLE `+role) })
		u, err := url.Parse(clone.URL)
		require.NoError(t, err)
		u.User = url.UserPassword(role, "x")
		code, stdout, stderr = itest.RunBin(t, bin, "nodes", "-timeout", "2m", u.String())
		require.Equal(t, 0, code, stderr)
		require.Regexp(t, `(?m)^1 +`+clone.Name+` +\d+ +public +stand-alone +- +2024-01-01T00:00:00.000Z +\? \(only the install's owner may read it\)$`, stdout)
	})
}

// A role that may create a schema can plant an install there: nodes runs
// its functions as their owner (SET ROLE), never with the rights of the
// superuser who runs nodes, and a role that may not become the owner is
// told so and runs none of them.
func TestNodesRunsAnInstallAsItsOwner(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		planter, reader := "planter_"+db.Name, "reader_"+db.Name
		_, err := db.Exec(ctx, `CREATE ROLE `+planter+` LOGIN PASSWORD 'x'; CREATE ROLE `+reader+` LOGIN PASSWORD 'x';
			GRANT CREATE ON DATABASE `+db.Name+` TO `+planter)
		require.NoError(t, err)
		t.Cleanup(func() {
			_, _ = db.Exec(context.Background(), `DROP OWNED BY `+planter+` CASCADE; DROP ROLE `+planter+`; DROP ROLE `+reader)
		})
		as := func(role string) string {
			u, err := url.Parse(db.URL)
			require.NoError(t, err)
			u.User = url.UserPassword(role, "x")
			return u.String()
		}
		p, err := pgx.Connect(ctx, as(planter))
		require.NoError(t, err)
		_, err = p.Exec(ctx, `CREATE SCHEMA p; CREATE TABLE p.ran (who text);
			CREATE FUNCTION p.ulid_flake() RETURNS bigint LANGUAGE sql RETURN 1;
			CREATE FUNCTION p.ulid_flake_epoch_ms() RETURNS bigint LANGUAGE sql RETURN 1704067200000;
			CREATE FUNCTION p.ulid_flake_node_sid() RETURNS integer LANGUAGE plpgsql
				AS 'BEGIN INSERT INTO p.ran VALUES (current_user); RETURN 1; END'`)
		require.NoError(t, err)
		require.NoError(t, p.Close(ctx))

		code, stdout, stderr := itest.RunBin(t, bin, "nodes", "-timeout", "2m", db.URL)
		require.Equal(t, 1, code, "the template's install has no SID: stdout:\n%s\nstderr:\n%s", stdout, stderr)
		require.Regexp(t, `(?m)^1 +`+db.Name+` +\d+ +p +scalable +1 +2024-01-01T00:00:00.000Z +none drawn: run Migrate$`, stdout)
		var ran []string
		require.NoError(t, db.QueryRow(ctx, `SELECT array_agg(who) FROM p.ran`).Scan(&ran))
		require.Equal(t, []string{planter}, ran)

		code, stdout, stderr = itest.RunBin(t, bin, "nodes", "-timeout", "2m", as(reader))
		require.Equal(t, 1, code, stderr)
		require.Contains(t, stderr, "URL 1: schema p: its functions belong to role "+planter+", as whom nodes runs them, and this role may not become it")
		require.Regexp(t, `(?m)^1 +`+db.Name+` +\d+ +public +stand-alone `, stdout)
		require.NoError(t, db.QueryRow(ctx, `SELECT array_agg(who) FROM p.ran`).Scan(&ran))
		require.Equal(t, []string{planter}, ran, "the reader ran nothing")
	})
}

// Two installs in one database (a tool's run without the install's
// search_path made the second), one of them stand-alone: one URL lists
// both and fails, naming them as two installs of one database, not two
// databases. (With a SID each, as in TestNodesNotInstalledAndHostileSchema,
// they pass.)
func TestNodesRefusesTwoInstallsInOneDatabase(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		in := newInstall(t, db.Server, 1)
		_, err := in.sdb.Exec(`CREATE SCHEMA second`)
		require.NoError(t, err)
		_, err = migrations.Migrate(context.Background(), in.sdb, migrations.WithSchema("second"))
		require.NoError(t, err)
		code, stdout, stderr := itest.RunBin(t, bin, "nodes", "-timeout", "2m", in.db.URL)
		require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		require.Contains(t, stderr, fmt.Sprintf("URL 1 (database %s, schema public) and URL 1 (database %s, schema second): URL 1 has no SID: stand-alone IDs of two installs in one database can be equal", in.db.Name, in.db.Name))
		require.NotContains(t, stderr, "two databases")
	})
}
