package sqlfn_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/pgxtype"
)

// sqlDB opens db through database/sql and pgx/v5/stdlib, with pgxtype
// registered on each connection or not.
func sqlDB(t *testing.T, db *pgtest.DB, register bool) *sql.DB {
	t.Helper()
	cfg, err := pgx.ParseConfig(db.URL)
	require.NoError(t, err)
	var opts []stdlib.OptionOpenDB
	if register {
		opts = append(opts, stdlib.OptionAfterConnect(pgxtype.AfterConnect))
	}
	sdb := stdlib.OpenDB(*cfg, opts...)
	t.Cleanup(func() { sdb.Close() })
	return sdb
}

func TestDatabaseSQL(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		for _, register := range []bool{false, true} {
			name := "plain"
			if register {
				name = "registered"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				sdb := sqlDB(t, db, register)
				table := "orders_" + name
				_, err := sdb.ExecContext(ctx, `CREATE TABLE `+table+` (
					id bigint PRIMARY KEY,
					customer bigint,
					note_ref bigint,
					code char(13) NOT NULL)`)
				require.NoError(t, err)

				ids := itest.RandomIDs(500, 4)
				for i, id := range ids {
					customer := ulidflake.NullID{ID: id, Valid: i%2 == 0}
					noteRef := sql.Null[ulidflake.ID]{V: id, Valid: i%3 == 0}
					_, err := sdb.ExecContext(ctx, `INSERT INTO `+table+` VALUES ($1, $2, $3, $4)`,
						id, customer, noteRef, ulidflake.TextID{ID: id})
					require.NoError(t, err)
				}

				rows, err := sdb.QueryContext(ctx, `SELECT id, customer, note_ref, code FROM `+table)
				require.NoError(t, err)
				defer rows.Close()
				seen := map[ulidflake.ID]bool{}
				for rows.Next() {
					var id ulidflake.ID
					var customer ulidflake.NullID
					var noteRef sql.Null[ulidflake.ID]
					var code ulidflake.TextID
					require.NoError(t, rows.Scan(&id, &customer, &noteRef, &code))
					require.Equal(t, id, code.ID)
					if customer.Valid {
						require.Equal(t, id, customer.ID)
					}
					if noteRef.Valid {
						require.Equal(t, id, noteRef.V)
					}
					seen[id] = true
				}
				require.NoError(t, rows.Err())
				require.Len(t, seen, len(ids))

				// The char(13) column holds the text form, upper case.
				var text string
				require.NoError(t, sdb.QueryRowContext(ctx, `SELECT code FROM `+table+` WHERE id = $1`, ids[0]).Scan(&text))
				require.Equal(t, ids[0].String(), text)

				// NULL: into NullID and sql.Null is fine, into ID an error.
				var n ulidflake.NullID
				require.NoError(t, sdb.QueryRowContext(ctx, `SELECT NULL::bigint`).Scan(&n))
				require.False(t, n.Valid)
				var id ulidflake.ID
				err = sdb.QueryRowContext(ctx, `SELECT NULL::bigint`).Scan(&id)
				require.ErrorIs(t, err, flake.ErrNull)
				err = sdb.QueryRowContext(ctx, `SELECT (-7)::bigint`).Scan(&id)
				require.ErrorIs(t, err, flake.ErrRange)
				var tid ulidflake.TextID
				err = sdb.QueryRowContext(ctx, `SELECT 'NOT-AN-ID-XYZ'::char(13)`).Scan(&tid)
				require.ErrorIs(t, err, flake.ErrCharacter)
				require.ErrorContains(t, err, "NOT-AN-ID-XYZ")

				// No zero ID is written, whichever type carries it.
				for _, zero := range []any{ulidflake.ID(0), ulidflake.NullID{Valid: true}, ulidflake.TextID{},
					sql.Null[ulidflake.ID]{Valid: true}} {
					_, err = sdb.ExecContext(ctx, `INSERT INTO `+table+` (id, code) VALUES (1, $1)`, zero)
					require.ErrorIs(t, err, ulidflake.ErrZeroID, "%#v", zero)
				}
				_, err = sdb.ExecContext(ctx, `INSERT INTO `+table+` (id, code) VALUES ($1, 'x')`, ulidflake.ID(0))
				require.ErrorIs(t, err, ulidflake.ErrZeroID)
				var count int
				require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&count))
				require.Equal(t, len(ids), count)
			})
		}
	})
}
