package jetexample

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

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/jet/gen/public/model"
	"github.com/ulidflake/ulidflake/examples/jet/gen/public/table"
	"github.com/ulidflake/ulidflake/examples/jet/idtype"
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

// distinct fails on a zero or repeated key.
func distinct[K interface {
	comparable
	IsZero() bool
}](t *testing.T, ks ...K) {
	t.Helper()
	seen := map[K]bool{}
	for _, k := range ks {
		if k.IsZero() || seen[k] {
			t.Fatalf("zero or repeated key %v in %v", k, ks)
		}
		seen[k] = true
	}
}

func byKey(a, b model.Customers) int { return a.ID.Compare(b.ID.ID) }

func TestJet(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		sdb := stdlib.OpenDBFromPool(db.Pool)
		defer sdb.Close()
		start := time.Now()

		// Keys from DEFAULT ulid_flake(), scanned into idtype.CustomerID.
		var cs []model.Customers
		var keys []idtype.CustomerID
		for i := range 5 {
			c, err := CreateCustomer(ctx, sdb, fmt.Sprintf("c%d", i))
			if err != nil || c.Name != fmt.Sprintf("c%d", i) {
				t.Fatalf("CreateCustomer: %+v, %v", c, err)
			}
			cs, keys = append(cs, c), append(keys, c.ID)
		}
		end := time.Now()
		distinct(t, keys...)
		for _, k := range keys {
			if ulidflake.DefaultEpoch().Time(k.ID).Before(start.Truncate(time.Millisecond)) || ulidflake.DefaultEpoch().Time(k.ID).After(end) {
				t.Errorf("%s: time %v outside [%v, %v]", k, ulidflake.DefaultEpoch().Time(k.ID), start, end)
			}
		}

		// Invoices with keys made in Go; lines with keys from PostgreSQL.
		invs := []model.Invoices{{CustomerID: keys[0], Total: 100}, {CustomerID: keys[0], Total: 200}, {CustomerID: keys[2], Total: 300}}
		if err := NewInvoices(ctx, sdb, invs); err != nil {
			t.Fatal(err)
		}
		distinct(t, invs[0].ID, invs[1].ID, invs[2].ID)
		lines, err := CreateLines(ctx, sdb, invs[2].ID, "a", "b")
		if err != nil || len(lines) != 2 || lines[0].InvoiceID != invs[2].ID || lines[1].Item != "b" {
			t.Fatalf("CreateLines: %+v, %v", lines, err)
		}
		distinct(t, lines[0].ID, lines[1].ID)
		var gotLines []model.InvoiceLines
		if err := table.InvoiceLines.SELECT(table.InvoiceLines.AllColumns).
			ORDER_BY(table.InvoiceLines.ID).QueryContext(ctx, sdb, &gotLines); err != nil || !slices.Equal(gotLines, lines) {
			t.Fatalf("lines read back: %+v, %v; want %+v", gotLines, err, lines)
		}

		// An IN list of prefixed keys; a join mapped into nested structs.
		got, err := CustomersByID(ctx, sdb, keys[4], keys[1], keys[3])
		if err != nil || !slices.Equal(got, []model.Customers{cs[1], cs[3], cs[4]}) {
			t.Fatalf("CustomersByID = %+v, %v", got, err)
		}
		nested, err := InvoicesOf(ctx, sdb, keys[2], keys[0])
		slices.SortFunc(invs[:2], func(a, b model.Invoices) int { return a.ID.Compare(b.ID.ID) })
		if err != nil || len(nested) != 2 || nested[0].Customers != cs[0] || nested[1].Customers != cs[2] ||
			!slices.Equal(nested[0].Invoices, invs[:2]) || !slices.Equal(nested[1].Invoices, invs[2:]) {
			t.Fatalf("InvoicesOf = %+v, %v", nested, err)
		}

		// A zero key is never written.
		err = NewInvoices(ctx, sdb, []model.Invoices{{Total: 1}})
		if !errors.Is(err, ulidflake.ErrZeroID) {
			t.Fatalf("an invoice with a zero customer: %v, want ErrZeroID", err)
		}

		// JSON carries the prefix.
		b, err := json.Marshal(invs[2])
		if want := fmt.Sprintf(`{"ID":%q,"CustomerID":%q,"Total":300}`, invs[2].ID, keys[2]); err != nil || string(b) != want {
			t.Fatalf("JSON %s, %v; want %s", b, err, want)
		}
	})
}

func TestJetPages(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		sdb := stdlib.OpenDBFromPool(db.Pool)
		defer sdb.Close()
		// 9 customers: 4 with keys from PostgreSQL, 5 made in Go.
		var all []model.Customers
		for i := range 4 {
			c, err := CreateCustomer(ctx, sdb, fmt.Sprintf("db%d", i))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, c)
		}
		for i := range 5 {
			id, err := ulidflake.New()
			if err != nil {
				t.Fatal(err)
			}
			c := model.Customers{ID: idtype.CustomerID{ID: id}, Name: fmt.Sprintf("go%d", i)}
			if _, err := table.Customers.INSERT(table.Customers.AllColumns).MODEL(c).ExecContext(ctx, sdb); err != nil {
				t.Fatal(err)
			}
			all = append(all, c)
		}
		slices.SortFunc(all, byKey)

		// Pages of 4 from the zero cursor: 4, 4, 1, then none.
		var cursor idtype.CustomerID
		var pages [][]model.Customers
		for pass := 0; ; pass++ {
			if pass > 9 { // a cursor that does not move would loop forever
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
		if len(pages) != 3 || len(pages[0]) != 4 || len(pages[1]) != 4 || len(pages[2]) != 1 {
			t.Fatalf("pages %v, want 4, 4 and 1 customers", pages)
		}
		if seen := slices.Concat(pages...); !slices.Equal(seen, all) {
			t.Fatalf("pages gave %+v, want every customer once in key order %+v", seen, all)
		}
	})
}
