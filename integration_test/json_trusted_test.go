package integration_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// JSON that PostgreSQL writes itself (row_to_json, json_agg, to_json)
// carries bigints as exact numbers above 2^53: TrustedID decodes them
// exactly, NULL included through a pointer, while the plain ID refuses
// them.
func TestTrustedJSONFromPostgres(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		_, err := db.Exec(ctx, `CREATE TABLE orders (id bigint PRIMARY KEY, customer bigint, total int NOT NULL)`)
		require.NoError(t, err)
		ids := []ulidflake.ID{1, ulidflake.ID(flake.MaxJSONNumber + 1), ulidflake.ID(flake.Max)}
		for range 50 {
			id, err := ulidflake.New()
			require.NoError(t, err)
			ids = append(ids, id)
		}
		for i, id := range ids {
			customer := ulidflake.NullID{ID: ids[(i+1)%len(ids)], Valid: i%2 == 0}
			_, err := db.Exec(ctx, `INSERT INTO orders VALUES ($1, $2, $3)`, id, customer, i)
			require.NoError(t, err)
		}
		type row struct {
			ID       ulidflake.TrustedID  `json:"id"`
			Customer *ulidflake.TrustedID `json:"customer"`
			Total    int                  `json:"total"`
		}
		check := func(t *testing.T, rows []row) {
			require.Len(t, rows, len(ids))
			for _, r := range rows {
				i := r.Total
				require.Equal(t, flake.ID(ids[i]), r.ID.ID)
				if i%2 == 0 {
					require.Equal(t, flake.ID(ids[(i+1)%len(ids)]), r.Customer.ID)
				} else {
					require.Nil(t, r.Customer)
				}
			}
		}

		var agg string
		require.NoError(t, db.QueryRow(ctx, `SELECT json_agg(o ORDER BY total)::text FROM orders o`).Scan(&agg))
		var rows []row
		require.NoError(t, json.Unmarshal([]byte(agg), &rows))
		check(t, rows)

		r, err := db.Query(ctx, `SELECT row_to_json(o)::text FROM orders o ORDER BY total`)
		require.NoError(t, err)
		rows = rows[:0]
		for r.Next() {
			var js string
			require.NoError(t, r.Scan(&js))
			var one row
			require.NoError(t, json.Unmarshal([]byte(js), &one))
			rows = append(rows, one)
		}
		require.NoError(t, r.Err())
		check(t, rows)

		var plain []struct {
			ID ulidflake.ID `json:"id"`
		}
		require.ErrorIs(t, json.Unmarshal([]byte(agg), &plain), flake.ErrJSON)
	})
}
