// Package moves_test moves databases that make their IDs in PostgreSQL to
// fresh databases, and checks that every table and row arrives, that the
// column defaults go on making IDs (at once, or once migrations.Migrate
// has run), and that the new IDs sort after the old ones and never repeat
// them (issue #30). Three installs are moved:
//
//   - the plain-SQL install of migrations.Migrate (DEFAULT ulid_flake(),
//     ulid_flake_scalable(sid));
//   - the C extension, DEFAULT ulid_flake_next(nextval('ulid_flake_seq')),
//     beside ulid_flake() on the same sequence;
//   - the prefixed text forms: a generated column and an expression index
//     of ulid_flake_encode(id, prefix), and a view.
//
// The moves: pg_dump in plain, custom and directory formats restored with
// psql and with pg_restore (--no-owner as a non-superuser, --section in
// three runs, -j 2) into a fresh database on the same server and on a
// server of a newer version (with the newer pg_dump); a schema-only dump
// restored and the rows copied with COPY; logical replication into a
// database with an install of its own; pg_upgrade from the oldest server
// version to the newest.
//
// Every server runs the extension's image (pgtest.MainExtension) with
// wal_level=logical; the dumps and restores run in the servers' containers
// (pgtest's Server.Command), and pg_upgrade in a container of its own
// with both releases (pgtest.NewUpgrade), so the tests need containers,
// not a URL.
package moves_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template migrated to the
// latest version; the extension is created where a test needs it.
func TestMain(m *testing.M) {
	pgtest.Settings("wal_level=logical")
	pgtest.MainExtension(m, pgtest.Migrated, "../../extension")
}
