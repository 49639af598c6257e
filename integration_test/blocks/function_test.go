package blocks_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestBlockFunction: ulid_flake_block(n) returns n IDs, ascending, for n
// from 1 to 65536, with any search_path, to a role with no grant of its
// own; another n is refused with 22023.
func TestBlockFunction(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		_, err := db.Exec(ctx, `CREATE ROLE blocks_nobody; GRANT USAGE ON SCHEMA public TO blocks_nobody`)
		if err != nil && !isDuplicateObject(err) {
			require.NoError(t, err)
		}
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, `SET ROLE blocks_nobody; SET search_path = pg_temp`)
		require.NoError(t, err)
		defer conn.Exec(ctx, `RESET ROLE; RESET search_path`) //nolint:errcheck
		for _, n := range []int{1, 2, 1000, 65536} {
			var ids []int64
			require.NoError(t, conn.QueryRow(ctx, `SELECT public.ulid_flake_block($1)`, n).Scan(&ids))
			require.Len(t, ids, n)
			require.True(t, slices.IsSorted(ids), "ascending")
			require.Len(t, slices.Compact(ids), n, "distinct")
			require.Positive(t, ids[0])
		}
		for _, n := range []any{0, -1, 65537, nil} {
			var ids []int64
			err := conn.QueryRow(ctx, `SELECT public.ulid_flake_block($1::integer)`, n).Scan(&ids)
			var pg *pgconn.PgError
			require.True(t, errors.As(err, &pg), "n = %v: %v", n, err)
			require.Equal(t, "22023", pg.Code, "n = %v", n)
			want := "NULL"
			if n != nil {
				want = fmt.Sprint(n)
			}
			require.Equal(t, "ulid_flake_block: a block of "+want+" IDs: want 1 to 65536", pg.Message)
		}
	})
}

// isDuplicateObject: the role exists (another server's run made it).
func isDuplicateObject(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "42710" || pg.Code == "23505")
}

// TestBlockFunctionDown: migrating down to version 4 drops
// ulid_flake_block with the rest of version 5; up again brings it back,
// and its IDs repeat none made before.
func TestBlockFunctionDown(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		catalog := func() string { return itest.CatalogBesides(t, ctx, sdb, "pg_catalog") }
		var before []int64
		require.NoError(t, db.QueryRow(ctx, `SELECT public.ulid_flake_block(1000)`).Scan(&before))
		_, err := migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		var gone bool
		require.NoError(t, db.QueryRow(ctx, `SELECT pg_catalog.to_regprocedure('public.ulid_flake_block(integer)') IS NULL`).Scan(&gone))
		require.True(t, gone)
		four := catalog()
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(4))
		require.NoError(t, err)
		require.Equal(t, four, catalog(), "version 5's down leaves another schema than version 4's")
		_, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		var after []int64
		require.NoError(t, db.QueryRow(ctx, `SELECT public.ulid_flake_block(1000)`).Scan(&after))
		all := append(slices.Clone(before), after...)
		slices.Sort(all)
		require.Len(t, slices.Compact(all), 2000)
	})
}
