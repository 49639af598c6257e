package convert_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

// EpochFiles writes the epoch into the application's history, before the
// conversion: a fresh database replayed with goose (the library's
// files under their own version table, then the application's) gets that
// epoch, where it got 2024's default without the file, and its keys
// convert; down and up again change nothing.
func TestConvertEpochFileReplays(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		dir := t.TempDir() // the application's goose directory
		require.NoError(t, os.WriteFile(filepath.Join(dir, "00001_customers.sql"), []byte(
			"-- +goose Up\nCREATE TABLE customers (id bigserial PRIMARY KEY, name text);\nINSERT INTO customers (name) VALUES ('old');\n"+
				"-- +goose Down\nDROP TABLE customers;\n"), 0o644))
		src, err := goose.NewProvider(goose.DialectPostgres, sdb, os.DirFS(dir))
		require.NoError(t, err)
		_, err = src.Up(ctx)
		require.NoError(t, err)
		conv, err := bigserial.ConvertKeys(ctx, sdb, []bigserial.Key{{Table: "customers", Column: "id"}})
		require.NoError(t, err)
		epoch, err := flake.NewEpoch(time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC))
		require.NoError(t, err)
		files, err := conv.EpochFiles("goose", "00002_ulid_flake_epoch", epoch)
		require.NoError(t, err)
		require.Contains(t, files["00002_ulid_flake_epoch.sql"], `SELECT "public".ulid_flake_set_epoch(1640995200000::bigint);`)
		keys, err := conv.Files("goose", "00003_ulid_flake_keys")
		require.NoError(t, err)
		for name, text := range keys {
			files[name] = text
		}
		for name, text := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
		}
		src, err = goose.NewProvider(goose.DialectPostgres, sdb, os.DirFS(dir))
		require.NoError(t, err)
		_, err = src.Up(ctx)
		require.NoError(t, err, "on the database it was written on, where no ID exists yet")

		fresh := itest.EmptyDB(t, db.Server)
		lib, err := goose.NewProvider(goose.DialectPostgres, fresh, migrations.GooseFS(), goose.WithTableName("ulid_flake_goose_db_version"))
		require.NoError(t, err)
		_, err = lib.Up(ctx)
		require.NoError(t, err)
		p, err := goose.NewProvider(goose.DialectPostgres, fresh, os.DirFS(dir))
		require.NoError(t, err)
		_, err = p.Up(ctx)
		require.NoError(t, err)
		epochOf := func(step string) {
			var epoch int64
			require.NoError(t, fresh.QueryRow(`SELECT ulid_flake_epoch_ms()`).Scan(&epoch))
			require.Equal(t, int64(1640995200000), epoch, "%s: the replayed database has the application's epoch", step)
		}
		epochOf("up")
		// Down and up again: the epoch file's down changes nothing, and
		// its up finds the epoch in force.
		_, err = p.DownTo(ctx, 1)
		require.NoError(t, err)
		epochOf("down")
		_, err = p.Up(ctx)
		require.NoError(t, err)
		epochOf("up again")
		require.Contains(t, columnDefault(t, fresh, "customers", "id"), "ulid_flake()")
		var id int64
		require.NoError(t, fresh.QueryRow(`INSERT INTO customers (name) VALUES ('new') RETURNING id`).Scan(&id))
		require.Greater(t, id, int64(1)<<40)
	})
}
