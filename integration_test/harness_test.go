package integration_test

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestServerRoundTrip is the harness's first test: it connects, checks the
// server's version, and round-trips IDs through a bigint primary key in
// creation order.
func TestServerRoundTrip(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()

		var num int
		require.NoError(t, db.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&num))
		require.Equal(t, db.Server.Major, num/10000)
		if m := regexp.MustCompile(`:(\d+)`).FindStringSubmatch(db.Server.Image); m != nil {
			want, _ := strconv.Atoi(m[1])
			require.Equal(t, want, num/10000, "image %s", db.Server.Image)
		}

		_, err := db.Exec(ctx, `CREATE TABLE item (id bigint PRIMARY KEY, n int NOT NULL)`)
		require.NoError(t, err)

		g, err := ulidflake.NewGenerator()
		require.NoError(t, err)
		const n = 2000
		created := make([]ulidflake.ID, n)
		for i := range created {
			created[i], err = g.NewWait(ctx)
			require.NoError(t, err)
		}
		// Insert in shuffled order: ORDER BY id must still give creation order.
		for _, i := range []int{3, 1, 0, 2} {
			for j := i; j < n; j += 4 {
				_, err := db.Exec(ctx, `INSERT INTO item (id, n) VALUES ($1, $2)`, created[j], j)
				require.NoError(t, err)
			}
		}

		rows, err := db.Query(ctx, `SELECT id, n FROM item ORDER BY id`)
		require.NoError(t, err)
		defer rows.Close()
		i := 0
		for rows.Next() {
			var id ulidflake.ID
			var k int
			require.NoError(t, rows.Scan(&id, &k))
			require.Equal(t, created[i], id, "row %d", i)
			require.Equal(t, i, k)
			i++
		}
		require.NoError(t, rows.Err())
		require.Equal(t, n, i)
	})
}
