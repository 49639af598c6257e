package rls_test

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// tenantPolicy is the policy docs/integrations.md gives: the tenant is the
// prefixed ID in app.tenant, and an empty or unset setting matches no row.
const tenantPolicy = `tenant_id = ulid_flake_decode(NULLIF(current_setting('app.tenant', true), ''), 'ten')`

// tenants creates, as the database's owner, the orders table under
// tenantPolicy, the same table under the policy without NULLIF
// (orders_naive), two tenants, and a login role that the policies apply
// to. It returns a connection of that role and the two tenants' prefixed
// IDs.
func tenants(t *testing.T, db *pgtest.DB) (*pgx.Conn, string, string) {
	t.Helper()
	ctx := context.Background()
	role := "app_" + db.Name
	_, err := db.Exec(ctx, `CREATE ROLE `+role+` LOGIN PASSWORD 'x';
		CREATE TABLE tenants (id bigint PRIMARY KEY DEFAULT ulid_flake(), name text NOT NULL);
		CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT ulid_flake(), tenant_id bigint NOT NULL REFERENCES tenants, total int);
		CREATE TABLE orders_naive (LIKE orders INCLUDING DEFAULTS);
		ALTER TABLE orders ENABLE ROW LEVEL SECURITY;
		ALTER TABLE orders_naive ENABLE ROW LEVEL SECURITY;
		CREATE POLICY tenant_orders ON orders USING (`+tenantPolicy+`);
		CREATE POLICY tenant_orders ON orders_naive USING (tenant_id = ulid_flake_decode(current_setting('app.tenant', true), 'ten'));
		GRANT SELECT, INSERT ON orders, orders_naive TO `+role+`;
		GRANT SELECT ON tenants TO `+role)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = db.Exec(context.Background(), `DROP OWNED BY `+role+` CASCADE; DROP ROLE `+role) })
	var a, b string
	require.NoError(t, db.QueryRow(ctx, `WITH t AS (INSERT INTO tenants (name) VALUES ('a'), ('b') RETURNING id, name)
		SELECT (SELECT ulid_flake_encode(id, 'ten') FROM t WHERE name = 'a'), (SELECT ulid_flake_encode(id, 'ten') FROM t WHERE name = 'b')`).Scan(&a, &b))
	u, err := url.Parse(db.URL)
	require.NoError(t, err)
	u.User = url.UserPassword(role, "x")
	conn, err := pgx.Connect(ctx, u.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn, a, b
}

// asTenant runs fn in a transaction whose app.tenant is tenant (SET LOCAL,
// as a pooled connection must), and rolls it back if fn fails.
func asTenant(t *testing.T, conn *pgx.Conn, tenant string, fn func(tx pgx.Tx) error) error {
	t.Helper()
	ctx := context.Background()
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('app.tenant', $1, true)`, tenant); err != nil {
			return err
		}
		return fn(tx)
	})
}

// sqlState returns the SQLSTATE of the server's error in err, or "".
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// Under a tenant policy, a role subject to it inserts rows keyed by
// DEFAULT ulid_flake() and by IDs made in Go, reads its own tenant's rows
// only, and cannot write a row of another tenant (42501).
func TestRLSKeys(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		conn, a, b := tenants(t, db)
		goID, err := ulidflake.New()
		require.NoError(t, err)
		var byDefault int64
		require.NoError(t, asTenant(t, conn, a, func(tx pgx.Tx) error {
			if err := tx.QueryRow(ctx, `INSERT INTO orders (tenant_id, total)
				VALUES (ulid_flake_decode(current_setting('app.tenant'), 'ten'), 1) RETURNING id`).Scan(&byDefault); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO orders (id, tenant_id, total)
				VALUES ($1, ulid_flake_decode(current_setting('app.tenant'), 'ten'), 2)`, goID.Int64())
			return err
		}))
		require.Greater(t, byDefault, int64(1)<<40, "a Ulid-Flake from DEFAULT")

		err = asTenant(t, conn, a, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO orders (tenant_id, total) VALUES (ulid_flake_decode($1, 'ten'), 3)`, b)
			return err
		})
		require.Equal(t, "42501", sqlState(err), "a row of another tenant: %v", err)

		for tenant, want := range map[string][]int64{a: {byDefault, goID.Int64()}, b: {}} {
			var got []int64
			require.NoError(t, asTenant(t, conn, tenant, func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, `SELECT id FROM orders ORDER BY total`)
				if err != nil {
					return err
				}
				got, err = pgx.CollectRows(rows, pgx.RowTo[int64])
				return err
			}))
			require.Equal(t, want, got, tenant)
		}
	})
}

// PostgreSQL refuses COPY FROM into a table with row-level security for a
// role the policy applies to (0A000), and writes nothing; COPY into a
// temporary table and INSERT … SELECT from it writes the rows, each
// checked by the policy.
func TestRLSCopy(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		conn, a, b := tenants(t, db)
		const n = 10_000
		rows := func(tenant string) [][]any {
			var tenantID int64
			require.NoError(t, conn.QueryRow(ctx, `SELECT ulid_flake_decode($1, 'ten')`, tenant).Scan(&tenantID))
			out := make([][]any, n)
			for i := range out {
				id, err := ulidflake.NewWait(ctx)
				require.NoError(t, err)
				out[i] = []any{id.Int64(), tenantID, i}
			}
			return out
		}
		own := rows(a)
		err := asTenant(t, conn, a, func(tx pgx.Tx) error {
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"orders"}, []string{"id", "tenant_id", "total"}, pgx.CopyFromRows(own))
			return err
		})
		require.Equal(t, "0A000", sqlState(err), "COPY under RLS: %v", err)

		copyVia := func(tenant string, data [][]any) error {
			return asTenant(t, conn, tenant, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `CREATE TEMP TABLE orders_in (LIKE orders) ON COMMIT DROP`); err != nil {
					return err
				}
				if _, err := tx.CopyFrom(ctx, pgx.Identifier{"orders_in"}, []string{"id", "tenant_id", "total"}, pgx.CopyFromRows(data)); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, `INSERT INTO orders SELECT * FROM orders_in`)
				return err
			})
		}
		require.Equal(t, "42501", sqlState(copyVia(a, rows(b))), "rows of another tenant through the temporary table")
		require.NoError(t, copyVia(a, own))
		var count int
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM orders`).Scan(&count))
		require.Equal(t, n, count, "the owner sees every row written: the tenant's, once")
	})
}

// A policy that decodes the tenant's prefixed ID from app.tenant: on a
// pooled connection the setting is NULL before any SET, and empty after a
// SET LOCAL of an earlier transaction or a RESET (what a pool's reset
// leaves). Without NULLIF, the empty string fails every query on the table with 22P02;
// with it, the query sees no row and writes none, and the tenant's own
// transaction still sees its rows.
func TestRLSEmptyTenantSetting(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		conn, a, _ := tenants(t, db)
		for _, table := range []string{"orders", "orders_naive"} {
			require.NoError(t, asTenant(t, conn, a, func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO `+table+` (tenant_id, total) VALUES (ulid_flake_decode($1, 'ten'), 1)`, a)
				return err
			}))
		}
		count := func(table string) (int, error) {
			var n int
			err := conn.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n)
			return n, err
		}
		var setting *string
		require.NoError(t, conn.QueryRow(ctx, `SELECT current_setting('app.tenant', true)`).Scan(&setting))
		require.Equal(t, "", *setting, "after the SET LOCAL of the earlier transactions")
		for _, reset := range []string{"", "SET app.tenant = 'x'; RESET app.tenant"} {
			if reset != "" {
				_, err := conn.Exec(ctx, reset)
				require.NoError(t, err)
			}
			_, err := count("orders_naive")
			require.Equal(t, "22P02", sqlState(err), "%q: the policy without NULLIF: %v", reset, err)
			n, err := count("orders")
			require.NoError(t, err, reset)
			require.Zero(t, n, reset)
			_, err = conn.Exec(ctx, `INSERT INTO orders (tenant_id, total) SELECT id, 1 FROM tenants LIMIT 1`)
			require.Equal(t, "42501", sqlState(err), "%q: no row written without a tenant: %v", reset, err)
		}
		require.NoError(t, asTenant(t, conn, a, func(tx pgx.Tx) error {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM orders`).Scan(&n); err != nil {
				return err
			}
			require.Equal(t, 1, n)
			return nil
		}))

		// A connection that never set it: NULL, no row, no error.
		fresh, err := pgx.Connect(ctx, conn.Config().ConnString())
		require.NoError(t, err)
		defer fresh.Close(ctx)
		require.NoError(t, fresh.QueryRow(ctx, `SELECT current_setting('app.tenant', true)`).Scan(&setting))
		require.Nil(t, setting)
		var n int
		require.NoError(t, fresh.QueryRow(ctx, `SELECT count(*) FROM orders`).Scan(&n))
		require.Zero(t, n)
	})
}
