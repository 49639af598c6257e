package sqlcexample

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/sqlc/dbpgx"
	"github.com/ulidflake/ulidflake/examples/sqlc/dbstd"
	"github.com/ulidflake/ulidflake/examples/sqlc/idtype"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/pgxtype"
)

// pageSize is small, so that a few rows make several pages.
const pageSize = 2

// walk pages through a keyset query from the first page, a nil cursor,
// to the first empty page, and returns the keys in the order read.
func walk[K any](t *testing.T, page func(after *K) ([]K, error)) []K {
	t.Helper()
	var keys []K
	var after *K
	for range 100 {
		got, err := page(after)
		if err != nil {
			t.Fatalf("page after %v: %v", after, err)
		}
		if len(got) == 0 {
			return keys
		}
		if len(got) > pageSize {
			t.Fatalf("page after %v has %d rows, more than %d", after, len(got), pageSize)
		}
		keys = append(keys, got...)
		after = &got[len(got)-1]
	}
	t.Fatal("no empty page after 100 pages")
	return nil
}

// allKeys is every key of table, in order, read without the generated code.
func allKeys[K any](t *testing.T, db *pgtest.DB, table string, key func(int64) K) []K {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT id FROM `+pgx.Identifier{table}.Sanitize()+` ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]K, len(ids))
	for i, id := range ids {
		keys[i] = key(id)
	}
	return keys
}

// drivers runs fn on pgx (every query exec mode) and on database/sql
// (lib/pq and pgx's stdlib).
func drivers(t *testing.T, db *pgtest.DB, onPgx func(t *testing.T, pool *pgxpool.Pool), onStd func(t *testing.T, sdb *sql.DB)) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		t.Run("pgx-"+mode.String(), func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(db.URL)
			if err != nil {
				t.Fatal(err)
			}
			cfg.ConnConfig.DefaultQueryExecMode = mode
			cfg.AfterConnect = pgxtype.AfterConnect
			pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			onPgx(t, pool)
		})
	}
	cfg, err := pgx.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func() (*sql.DB, error){
		"libpq": func() (*sql.DB, error) { return sql.Open("postgres", db.URL) },
		"pgx-stdlib": func() (*sql.DB, error) {
			return stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(pgxtype.AfterConnect)), nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			sdb, err := open()
			if err != nil {
				t.Fatal(err)
			}
			defer sdb.Close()
			onStd(t, sdb)
		})
	}
}

// TestFirstPage: keyset pagination in the domain recipe goes through one
// query from the first page on: ListCustomersAfter's cursor is a
// *idtype.CustomerID and ListPostsAfter's a ulidflake.NullID, nil and not
// valid for the first page, and the pages hold every key once, in order.
func TestFirstPage(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		withSchema(t, db)
		q := dbpgx.New(db.Pool)
		for _, name := range []string{"a", "b", "c", "d", "e"} {
			if _, err := q.CreateCustomer(ctx, name); err != nil {
				t.Fatal(err)
			}
			if _, err := q.CreatePost(ctx, dbpgx.CreatePostParams{Title: name}); err != nil {
				t.Fatal(err)
			}
		}
		customers := allKeys(t, db, "customers", func(id int64) idtype.CustomerID { return idtype.CustomerID{ID: ulidflake.ID(id)} })
		posts := allKeys(t, db, "posts", func(id int64) ulidflake.ID { return ulidflake.ID(id) })
		check := func(t *testing.T, gotCustomers []idtype.CustomerID, gotPosts []ulidflake.ID) {
			t.Helper()
			if len(customers) != 5 || !slices.Equal(gotCustomers, customers) || !slices.Equal(gotPosts, posts) {
				t.Errorf("pages read customers %v, posts %v; want %v, %v", gotCustomers, gotPosts, customers, posts)
			}
		}
		drivers(t, db, func(t *testing.T, pool *pgxpool.Pool) {
			q := dbpgx.New(pool)
			check(t, walk(t, func(after *idtype.CustomerID) ([]idtype.CustomerID, error) {
				rows, err := q.ListCustomersAfter(ctx, dbpgx.ListCustomersAfterParams{After: after, PageSize: pageSize})
				return keysOf(rows, func(c dbpgx.Customer) idtype.CustomerID { return c.ID }), err
			}), walk(t, func(after *ulidflake.ID) ([]ulidflake.ID, error) {
				rows, err := q.ListPostsAfter(ctx, dbpgx.ListPostsAfterParams{After: nullID(after), PageSize: pageSize})
				return keysOf(rows, func(p dbpgx.Post) ulidflake.ID { return p.ID }), err
			}))
		}, func(t *testing.T, sdb *sql.DB) {
			q := dbstd.New(sdb)
			check(t, walk(t, func(after *idtype.CustomerID) ([]idtype.CustomerID, error) {
				rows, err := q.ListCustomersAfter(ctx, dbstd.ListCustomersAfterParams{After: after, PageSize: pageSize})
				return keysOf(rows, func(c dbstd.Customer) idtype.CustomerID { return c.ID }), err
			}), walk(t, func(after *ulidflake.ID) ([]ulidflake.ID, error) {
				rows, err := q.ListPostsAfter(ctx, dbstd.ListPostsAfterParams{After: nullID(after), PageSize: pageSize})
				return keysOf(rows, func(p dbstd.Post) ulidflake.ID { return p.ID }), err
			}))
		})
	})
}

func keysOf[R, K any](rows []R, key func(R) K) []K {
	keys := make([]K, len(rows))
	for i, r := range rows {
		keys[i] = key(r)
	}
	return keys
}

// nullID is the NullID cursor of a page: not valid for the first.
func nullID(after *ulidflake.ID) ulidflake.NullID {
	if after == nil {
		return ulidflake.NullID{}
	}
	return ulidflake.NullID{ID: *after, Valid: true}
}
