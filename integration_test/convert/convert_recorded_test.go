package convert_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

// behindViews is a serial key (widened to bigint) with a view on it and a
// view on the int column that references it, and the SQL that drops the
// views and creates them again, unqualified as an application writes it.
const (
	behindViews = `CREATE TABLE k (id serial PRIMARY KEY, note text);
		CREATE TABLE r (kid int REFERENCES k);
		CREATE VIEW v AS SELECT id, note FROM k;
		CREATE VIEW vr AS SELECT kid FROM r;
		INSERT INTO k (note) VALUES ('a'), ('b'); INSERT INTO r VALUES (1)`
	dropViews   = "DROP VIEW v;\nDROP VIEW vr;\n"
	createViews = "CREATE VIEW v AS SELECT id, note FROM k;\nCREATE VIEW vr AS SELECT kid FROM r;\n"
)

// checkBehindViews checks that the views are back and read the old rows
// and a new one, and that the key is converted (or back on a sequence).
func checkBehindViews(t *testing.T, db *sql.DB, step string, converted bool) {
	t.Helper()
	var id int64
	require.NoError(t, db.QueryRow(`INSERT INTO k (note) VALUES ('new') RETURNING id`).Scan(&id), step)
	_, err := db.Exec(`INSERT INTO r VALUES ($1)`, id)
	require.NoError(t, err, step)
	if converted {
		require.Greater(t, id, int64(1)<<40, "%s: a Ulid-Flake key", step)
	} else {
		require.Less(t, id, int64(1)<<40, "%s: a sequence's key", step)
	}
	var inV, inVR int
	require.NoError(t, db.QueryRow(`SELECT (SELECT count(*) FROM v WHERE id <= 2 OR id = $1), (SELECT count(*) FROM vr)`, id).Scan(&inV, &inVR), step)
	require.Equal(t, 3, inV, "%s: the view reads the old rows and the new one", step)
	var typ string
	require.NoError(t, db.QueryRow(`SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'vr'::regclass AND attname = 'kid'`).Scan(&typ))
	require.Equal(t, "bigint", typ, "%s: the view was created again on the widened column", step)
}

// The recorded path the refusal names: the SQL given to WithDependents
// (the CLI's -drop and -create files) runs in place, in the conversion's
// transaction, under the caller's search_path, in Apply, in golang-migrate's
// files and in goose's. Each tool runs the files up, down and up again on a
// database of its own with the views in place; the CLI numbers goose's
// file as goose create -s does (-version 2: 00002_). SQL that leaves a
// dependent in place is refused by PostgreSQL (0A000) and changes nothing.
func TestConvertDependentsRecorded(t *testing.T) {
	t.Parallel()
	bin := itest.BuildCLI(t)
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		_, err := sdb.Exec(behindViews)
		require.NoError(t, err)
		_, err = bigserial.ConvertSerial(ctx, sdb, "k", "id")
		require.ErrorIs(t, err, bigserial.ErrDependents)
		require.ErrorContains(t, err, "WithDependents")
		require.ErrorContains(t, err, "-drop FILE -create FILE")

		// Dropping one view of two: PostgreSQL refuses, nothing changes.
		half, err := bigserial.ConvertSerial(ctx, sdb, "k", "id", bigserial.WithDependents("DROP VIEW v;", createViews))
		require.NoError(t, err)
		err = half.Apply(ctx, sdb, migrations.DirectionUp)
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr)
		require.Equal(t, "0A000", pgErr.Code, err)
		require.Contains(t, columnDefault(t, sdb, "k", "id"), "nextval(", "the table changed")
		_, err = sdb.Exec(`SELECT * FROM v`)
		require.NoError(t, err, "the view is still there")

		_, err = bigserial.ConvertSerial(ctx, sdb, "k", "id", bigserial.WithDependents("DROP VIEW v", ""))
		require.ErrorIs(t, err, bigserial.ErrConvert, "SQL that does not end in a semicolon")

		conv, err := bigserial.ConvertSerial(ctx, sdb, "k", "id", bigserial.WithDependents(dropViews, createViews))
		require.NoError(t, err)
		require.Len(t, conv.Dependents, 2)
		require.NotContains(t, conv.Down, "VIEW", "the way back changes no type: nothing to drop")

		t.Run("golang-migrate", func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, conv, "golang-migrate", dir)
			other := db.Server.NewDB(t)
			odb := itest.StdDB(t, other)
			_, err := odb.Exec(behindViews)
			require.NoError(t, err)
			m, err := migrate.New("file://"+dir, other.URL)
			require.NoError(t, err)
			defer m.Close()
			for _, s := range []struct {
				name      string
				run       func() error
				converted bool
			}{{"up", m.Up, true}, {"down", func() error { return m.Steps(-1) }, false}, {"up again", m.Up, true}} {
				require.NoError(t, s.run(), s.name)
				_, dirty, err := m.Version()
				if !errors.Is(err, migrate.ErrNilVersion) {
					require.NoError(t, err, s.name)
				}
				require.False(t, dirty, s.name)
				checkBehindViews(t, odb, "golang-migrate "+s.name, s.converted)
			}
		})
		t.Run("goose", func(t *testing.T) {
			dir, sqlDir := t.TempDir(), t.TempDir()
			drop, create := filepath.Join(sqlDir, "drop.sql"), filepath.Join(sqlDir, "create.sql")
			require.NoError(t, os.WriteFile(drop, []byte(dropViews), 0o644))
			require.NoError(t, os.WriteFile(create, []byte(createViews), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "00001_init.sql"), []byte("-- +goose Up\nSELECT 1;\n-- +goose Down\nSELECT 1;\n"), 0o644))
			code, stdout, stderr := itest.RunBin(t, bin, "convert", "-database-url", db.URL, "-table", "k",
				"-tool", "goose", "-dir", dir, "-version", "2", "-drop", drop, "-create", create)
			require.Equal(t, 0, code, stderr)
			require.Contains(t, stdout, "00002_ulid_flake_keys.sql")
			want, err := conv.Files("goose", "00002_ulid_flake_keys")
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(dir, "00002_ulid_flake_keys.sql"))
			require.NoError(t, err)
			require.Equal(t, want["00002_ulid_flake_keys.sql"], string(got))

			other := db.Server.NewDB(t)
			odb := itest.StdDB(t, other)
			_, err = odb.Exec(behindViews)
			require.NoError(t, err)
			p, err := goose.NewProvider(goose.DialectPostgres, odb, os.DirFS(dir))
			require.NoError(t, err)
			up := func() error { _, err := p.Up(ctx); return err }
			down := func() error { _, err := p.Down(ctx); return err }
			for _, s := range []struct {
				name      string
				run       func() error
				converted bool
			}{{"up", up, true}, {"down", down, false}, {"up again", up, true}} {
				require.NoError(t, s.run(), s.name)
				checkBehindViews(t, odb, "goose "+s.name, s.converted)
			}
		})
		t.Run("apply", func(t *testing.T) {
			require.NoError(t, conv.Apply(ctx, sdb, migrations.DirectionUp), conv.Up)
			checkBehindViews(t, sdb, "apply", true)
		})
	})
}
