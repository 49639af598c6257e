package integration_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/pgxtype"
)

// Keyset pagination from the zero cursor, WHERE id > $1, in every driver
// and exec mode: the zero ID is refused as an ID argument (so that it is
// never stored as a key) and accepted as a Bound, and pages of 7 walk 50
// rows in order, each once.
func TestKeysetPaginationFromZero(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		_, err := db.Exec(ctx, `CREATE TABLE item (id bigint PRIMARY KEY DEFAULT ulid_flake(), n int NOT NULL)`)
		require.NoError(t, err)
		_, err = db.Exec(ctx, `INSERT INTO item (n) SELECT g FROM generate_series(1, 50) g`)
		require.NoError(t, err)
		const page = `SELECT id FROM item WHERE id > $1 ORDER BY id LIMIT 7`

		walk := func(t *testing.T, query func(cursor ulidflake.Bound) ([]ulidflake.ID, error)) {
			t.Helper()
			var all []ulidflake.ID
			var cursor ulidflake.Bound // zero: from the start
			for {
				ids, err := query(cursor)
				require.NoError(t, err)
				if len(ids) == 0 {
					break
				}
				for _, id := range ids {
					require.Greater(t, int64(id), int64(cursor))
					cursor = ulidflake.Bound(id)
				}
				all = append(all, ids...)
			}
			require.Len(t, all, 50)
		}

		for _, register := range []bool{false, true} {
			for _, mode := range execModes {
				p := itest.Pool(t, db, register, mode)
				walk(t, func(cursor ulidflake.Bound) ([]ulidflake.ID, error) {
					rows, _ := p.Query(ctx, page, cursor)
					return pgx.CollectRows(rows, pgx.RowTo[ulidflake.ID])
				})
				_, err := p.Exec(ctx, page, ulidflake.ID(0))
				require.ErrorIs(t, err, ulidflake.ErrZeroID, "register=%v mode=%v", register, mode)
				require.NotContains(t, err.Error(), "written")
				_, err = p.Exec(ctx, `INSERT INTO item (id, n) VALUES ($1, 0)`, ulidflake.ID(0))
				require.ErrorIs(t, err, ulidflake.ErrZeroID)
			}
		}

		cfg, err := pgx.ParseConfig(db.URL)
		require.NoError(t, err)
		sdb := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(pgxtype.AfterConnect))
		t.Cleanup(func() { sdb.Close() })
		walk(t, func(cursor ulidflake.Bound) ([]ulidflake.ID, error) {
			rows, err := sdb.QueryContext(ctx, page, cursor)
			if err != nil {
				return nil, err
			}
			return collectSQL(rows)
		})

		gdb, err := gorm.Open(postgres.Open(db.URL), &gorm.Config{})
		require.NoError(t, err)
		walk(t, func(cursor ulidflake.Bound) ([]ulidflake.ID, error) {
			var ids []ulidflake.ID
			err := gdb.Table("item").Where("id > ?", cursor).Order("id").Limit(7).Pluck("id", &ids).Error
			return ids, err
		})

		var n int64
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM item WHERE id = 0`).Scan(&n))
		require.Zero(t, n, "a zero key was stored")
	})
}

func collectSQL(rows *sql.Rows) ([]ulidflake.ID, error) {
	defer rows.Close()
	var ids []ulidflake.ID
	for rows.Next() {
		var id ulidflake.ID
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
