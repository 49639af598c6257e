package convert_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// A goose file holds names read from the catalog, not only the keys
// given: a serial's sequence, the tables and columns of foreign keys
// widened with the key. goose acts on any line that starts with "--" and
// holds "+goose", even inside a quoted name, so each of these names with a
// line break before an annotation is refused for goose (naming it), and
// written for golang-migrate, which sends the file whole. Before, only the
// keys' own names were checked: `convert -tool goose` wrote the renamed
// sequence's "-- +goose NO TRANSACTION", and goose ran the file without a
// transaction.
func TestConvertFilesGooseHostileNames(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		for _, tc := range []struct {
			name, schema, table, ident string
		}{
			{"sequence", `CREATE SCHEMA s2; CREATE TABLE s2.t (id serial PRIMARY KEY);
				ALTER SEQUENCE s2.t_id_seq RENAME TO "q
-- +goose NO TRANSACTION
"`, "s2.t", "q\n-- +goose NO TRANSACTION\n"},
			{"child table", `CREATE SCHEMA s3; CREATE TABLE s3.t (id serial PRIMARY KEY);
				CREATE TABLE s3."c
-- +goose StatementEnd" (tid int REFERENCES s3.t)`, "s3.t", "c\n-- +goose StatementEnd"},
			{"child column", `CREATE SCHEMA s4; CREATE TABLE s4.t (id serial PRIMARY KEY);
				CREATE TABLE s4.c ("x
-- +goose ENVSUB ON" int REFERENCES s4.t)`, "s4.t", "x\n-- +goose ENVSUB ON"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := sdb.Exec(tc.schema)
				require.NoError(t, err)
				conv, err := migrations.ConvertSerial(ctx, sdb, tc.table, "id")
				require.NoError(t, err)
				_, err = conv.Files("goose", "00002_keys")
				require.ErrorIs(t, err, migrations.ErrConvert)
				require.Contains(t, err.Error(), `"`+tc.ident+`"`, "the message names the object")
				_, err = conv.Files("golang-migrate", "000002_keys")
				require.NoError(t, err)

				dir := t.TempDir()
				code, _, stderr := itest.RunBin(t, itest.BuildCLI(t), "convert", "-database-url", db.URL,
					"-table", tc.table, "-tool", "goose", "-dir", dir)
				require.Equal(t, 2, code, stderr)
				written, err := os.ReadDir(dir)
				require.NoError(t, err)
				require.Empty(t, written)
			})
		}
	})
}
