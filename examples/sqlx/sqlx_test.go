package sqlxexample

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// The template database gets the migrations and the schema through Setup.
func TestMain(m *testing.M) {
	pgtest.Main(m, func(ctx context.Context, conn *pgx.Conn) error {
		db := stdlib.OpenDB(*conn.Config())
		defer db.Close()
		return Setup(ctx, db)
	})
}

func open(t *testing.T, db *pgtest.DB) *sqlx.DB {
	t.Helper()
	sdb, err := sqlx.Open("pgx", db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sdb.Close() })
	return sdb
}

// keys returns the keys of rows, failing on a zero or repeated one.
func keys[T any, K interface {
	comparable
	IsZero() bool
}](t *testing.T, rows []T, key func(T) K) []K {
	t.Helper()
	seen := map[K]bool{}
	var ks []K
	for _, r := range rows {
		k := key(r)
		if k.IsZero() || seen[k] {
			t.Fatalf("zero or repeated key %v in %v", k, rows)
		}
		seen[k] = true
		ks = append(ks, k)
	}
	return ks
}

func customerKey(c Customer) CustomerID { return c.ID }

func TestSqlx(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		sdb := open(t, db)
		start := time.Now()

		// Keys from DEFAULT ulid_flake(), scanned into CustomerID.
		var cs []Customer
		for i := range 7 {
			c, err := CreateCustomer(ctx, sdb, fmt.Sprintf("c%d", i))
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c)
		}
		ids := keys(t, cs, customerKey)
		end := time.Now()
		for _, id := range ids {
			if ulidflake.DefaultEpoch().Time(id.ID).Before(start.Truncate(time.Millisecond)) || ulidflake.DefaultEpoch().Time(id.ID).After(end) {
				t.Errorf("%s: time %v outside [%v, %v]", id, ulidflake.DefaultEpoch().Time(id.ID), start, end)
			}
		}

		// Invoices with keys made in Go, inserted in one named statement.
		invs := []Invoice{{CustomerID: ids[0], Total: 100}, {CustomerID: ids[0], Total: 200}, {CustomerID: ids[3], Total: 300}}
		if err := NewInvoices(ctx, sdb, invs); err != nil {
			t.Fatal(err)
		}
		keys(t, invs, func(i Invoice) InvoiceID { return i.ID })
		var got []Invoice
		if err := sdb.SelectContext(ctx, &got, `SELECT * FROM invoices WHERE customer_id = $1 ORDER BY id`, ids[0]); err != nil {
			t.Fatal(err)
		}
		want := invs[:2]
		slices.SortFunc(want, func(a, b Invoice) int { return a.ID.Compare(b.ID.ID) })
		if !slices.Equal(got, want) {
			t.Fatalf("invoices of %s = %+v, want %+v", ids[0], got, want)
		}

		// Plain IDs from DEFAULT, in the order given.
		lines, err := CreateLines(ctx, sdb, invs[2].ID, []string{"a", "b", "c"})
		if err != nil || len(lines) != 3 {
			t.Fatalf("lines: %+v, %v", lines, err)
		}
		lineIDs := keys(t, lines, func(l Line) ulidflake.ID { return l.ID })
		for i, l := range lines {
			if l.InvoiceID != invs[2].ID || l.Item != string(rune('a'+i)) {
				t.Errorf("line %d = %+v", i, l)
			}
		}

		// sqlx.In with a slice of ulidflake.ID, and of CustomerID.
		pick := []ulidflake.ID{lineIDs[2], lineIDs[0]}
		ls, err := LinesByID(ctx, sdb, pick)
		if err != nil || len(ls) != 2 || ls[0] != lines[0] || ls[1] != lines[2] {
			t.Fatalf("LinesByID(%v) = %+v, %v", pick, ls, err)
		}
		some := []CustomerID{ids[5], ids[1], ids[3]}
		byID, err := CustomersByID(ctx, sdb, some)
		if err != nil || !slices.Equal(byID, []Customer{cs[1], cs[3], cs[5]}) {
			t.Fatalf("CustomersByID(%v) = %+v, %v", some, byID, err)
		}
		if _, err := CustomersByID(ctx, sdb, []CustomerID{ids[0], {}}); !errors.Is(err, ulidflake.ErrZeroID) {
			t.Fatalf("CustomersByID with a zero key: %v, want ErrZeroID", err)
		}
		if _, err := LinesByID(ctx, sdb, nil); err == nil {
			t.Fatal("LinesByID(nil): no error")
		}

		// JSON carries the prefix.
		b, err := json.Marshal(byID[0])
		if want := `{"id":"` + ids[1].String() + `","name":"c1"}`; err != nil || string(b) != want {
			t.Fatalf("JSON %s, %v; want %s", b, err, want)
		}
	})
}

func TestSqlxPages(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		sdb := open(t, db)
		// 11 customers: 5 with keys from PostgreSQL, 6 made in Go.
		var all []Customer
		for i := range 5 {
			c, err := CreateCustomer(ctx, sdb, fmt.Sprintf("db%d", i))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, c)
		}
		for i := range 6 {
			id, err := ulidflake.New()
			if err != nil {
				t.Fatal(err)
			}
			c := Customer{ID: CustomerID{ID: id}, Name: fmt.Sprintf("go%d", i)}
			if _, err := sdb.NamedExecContext(ctx, `INSERT INTO customers (id, name) VALUES (:id, :name)`, c); err != nil {
				t.Fatal(err)
			}
			all = append(all, c)
		}
		slices.SortFunc(all, func(a, b Customer) int { return a.ID.Compare(b.ID.ID) })

		// Pages of 4 from the zero cursor: 4, 4, 3, then none.
		var cursor CustomerID
		var pages [][]Customer
		for pass := 0; ; pass++ {
			if pass > 11 { // a cursor that does not move would loop forever
				t.Fatalf("more pages than customers: the cursor does not advance")
			}
			page, err := CustomersAfter(ctx, sdb, cursor, 4)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			pages = append(pages, page)
			cursor = page[len(page)-1].ID
		}
		if len(pages) != 3 || len(pages[0]) != 4 || len(pages[1]) != 4 || len(pages[2]) != 3 {
			t.Fatalf("pages %v, want 4, 4 and 3 customers", pages)
		}
		if seen := slices.Concat(pages...); !slices.Equal(seen, all) {
			t.Fatalf("pages gave %+v, want every customer once in key order %+v", seen, all)
		}
	})
}
