package migrate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

type cusPrefix struct{}

func (cusPrefix) Prefix() string { return "cus" }

type customerID = ulidflake.Prefixed[cusPrefix]

// TestSQLPrefixMatchesGo cross-checks ulid_flake_encode(id, prefix) and
// ulid_flake_decode(s, prefix) (migration version 5) against flake.Prefixed: the
// same text for every ID, and the same verdict on every input: what Go's
// ParsePrefixed refuses (ErrPrefix, or Parse's errors after the prefix),
// SQL refuses with SQLSTATE 22P02 and the same reason; an invalid prefix is
// 22023 in SQL and ErrPrefix in Go.
func TestSQLPrefixMatchesGo(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		ids := itest.RandomIDs(2_000, 7)
		ints := make([]int64, len(ids))
		for i, id := range ids {
			ints[i] = id.Int64()
		}
		rows, err := db.Query(ctx, `SELECT x, ulid_flake_encode(x, 'cus'), ulid_flake_decode(lower(ulid_flake_encode(x, 'cus')), 'cus')
			FROM unnest($1::bigint[]) WITH ORDINALITY AS u(x, n) ORDER BY n`, ints)
		require.NoError(t, err)
		i := 0
		for rows.Next() {
			var x, decoded int64
			var text string
			require.NoError(t, rows.Scan(&x, &text, &decoded))
			require.Equal(t, customerID{ID: ids[i]}.String(), text, "encode %d", x)
			require.Equal(t, x, decoded, "decode %s", text)
			i++
		}
		require.NoError(t, rows.Err())
		require.Equal(t, len(ids), i)

		for _, tc := range []struct{ in, reason string }{
			{"cus_00EZJCRCB4650", ""}, {"cus_00ezjcrcb4650", ""}, {"cus_0000000000000", ""},
			{"00EZJCRCB4650", `has no prefix, want "cus_" followed by 13 characters`},
			{"", `has no prefix`}, {"cus", `has no prefix`}, {"cus00EZJCRCB4650", `has no prefix`},
			{"_00EZJCRCB4650", `has no prefix`}, {"cus-00EZJCRCB4650", `has no prefix`},
			{"ord_00EZJCRCB4650", `has the prefix "ord", want "cus"`},
			{"CUS_00EZJCRCB4650", `has the prefix "CUS", want "cus"`},
			{"cus _00EZJCRCB4650", `has the prefix "cus ", want "cus"`},
			{"_a_00EZJCRCB4650", `has the prefix "_a", want "cus"`},
			{"cus_", "wrong length"}, {"cus_00EZ", "wrong length"},
			{"cus_cus_00EZJCRCB4650", `has the prefix "cus_cus", want "cus"`},
			{"cus_x_00EZJCRCB4650", `has the prefix "cus_x", want "cus"`},
			{"cus__00EZJCRCB4650", `has the prefix "cus_", want "cus"`},
			{"cus_00EZJCRCB465U", "invalid character"}, {"cus_00EZJCRCB465ß", "wrong length"},
			{"cus_8000000000000", "value above 7ZZZZZZZZZZZZ"},
		} {
			goID, goErr := flake.ParsePrefixed[cusPrefix](tc.in)
			var v int64
			err := db.QueryRow(ctx, `SELECT ulid_flake_decode($1, 'cus')`, tc.in).Scan(&v)
			if tc.reason == "" {
				require.NoError(t, goErr, "Go %q", tc.in)
				require.NoError(t, err, "SQL %q", tc.in)
				require.Equal(t, goID.Int64(), v, "%q", tc.in)
				continue
			}
			require.ErrorContains(t, goErr, tc.reason, "Go %q", tc.in)
			require.Equal(t, strings.Contains(tc.reason, "prefix"), errors.Is(goErr, flake.ErrPrefix), "Go %q: %v", tc.in, goErr)
			var pgErr *pgconn.PgError
			require.ErrorAs(t, err, &pgErr, "SQL %q", tc.in)
			require.Equal(t, "22P02", pgErr.Code, "SQL %q: %s", tc.in, pgErr.Message)
			require.Contains(t, pgErr.Message, tc.reason, "SQL %q", tc.in)
		}

		for _, prefix := range []string{"", "Cus", "_a", "a_", "1a", "a-b", "a b", "é", strings.Repeat("a", 64)} {
			for _, q := range []string{`SELECT ulid_flake_encode(1, $1)`, `SELECT ulid_flake_decode('a_0000000000001', $1)::text`} {
				var s string
				err := db.QueryRow(ctx, q, prefix).Scan(&s)
				var pgErr *pgconn.PgError
				require.ErrorAs(t, err, &pgErr, "%s with %q", q, prefix)
				require.Equal(t, "22023", pgErr.Code, "%s with %q", q, prefix)
				require.Contains(t, pgErr.Message, "wrong prefix")
			}
		}
		var long string
		require.NoError(t, db.QueryRow(ctx, `SELECT ulid_flake_encode(1, $1)`, strings.Repeat("a", 63)).Scan(&long))
		require.Equal(t, strings.Repeat("a", 63)+"_0000000000001", long)
		var null *string
		require.NoError(t, db.QueryRow(ctx, `SELECT ulid_flake_decode(NULL, 'cus')::text`).Scan(&null))
		require.Nil(t, null)
	})
}
