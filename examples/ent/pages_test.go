package entexample

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/ent/ent"
	"github.com/ulidflake/ulidflake/examples/ent/ent/customer"
	"github.com/ulidflake/ulidflake/examples/ent/idtype"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// recorder is an ent driver that keeps the text of every query it runs.
type recorder struct {
	dialect.Driver
	mu      sync.Mutex
	queries []string
}

func (r *recorder) Query(ctx context.Context, query string, args, v any) error {
	r.mu.Lock()
	r.queries = append(r.queries, query)
	r.mu.Unlock()
	return r.Driver.Query(ctx, query, args, v)
}

// take returns the queries run since the last call, and forgets them.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queries
	r.queries = nil
	return q
}

// TestEntPages walks every page of customers from the zero cursor: each
// page is one query, the first the same as the next ones, and the pages
// hold every key once, in order.
func TestEntPages(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		rec := &recorder{Driver: driver(t, db)}
		client := ent.NewClient(ent.Driver(rec))
		if err := client.Schema.Create(ctx); err != nil {
			t.Fatal(err)
		}
		// 11 customers: 5 with keys from PostgreSQL, 6 made in Go.
		var all []idtype.CustomerID
		for i := range 11 {
			c := client.Customer.Create().SetName(fmt.Sprint(i))
			if i >= 5 {
				id, err := ulidflake.New()
				if err != nil {
					t.Fatal(err)
				}
				c.SetID(idtype.CustomerID{ID: id})
			}
			saved, err := c.Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, saved.ID)
		}
		slices.SortFunc(all, func(a, b idtype.CustomerID) int { return a.Compare(b.ID) })

		// The generated predicate refuses the zero cursor.
		if _, err := client.Customer.Query().Where(customer.IDGT(idtype.CustomerID{})).All(ctx); !errors.Is(err, ulidflake.ErrZeroID) {
			t.Fatalf("IDGT(zero): %v, want ErrZeroID", err)
		}

		// Pages of 4 from the zero cursor: 4, 4, 3, then none.
		rec.take()
		var cursor idtype.CustomerID
		var seen []idtype.CustomerID
		var sizes []int
		var first string
		for pass := 0; ; pass++ {
			if pass > 11 { // a cursor that does not move would loop forever
				t.Fatal("more pages than customers: the cursor does not advance")
			}
			page, err := CustomersAfter(ctx, client, cursor, 4)
			if err != nil {
				t.Fatal(err)
			}
			q := rec.take()
			if pass == 0 && len(q) == 1 {
				first = q[0]
			}
			if len(q) != 1 || q[0] != first {
				t.Fatalf("page %d ran %q; want one query, the first page's %q", pass, q, first)
			}
			if len(page) == 0 {
				break
			}
			sizes = append(sizes, len(page))
			for _, c := range page {
				seen = append(seen, c.ID)
			}
			cursor = page[len(page)-1].ID
		}
		if !slices.Equal(sizes, []int{4, 4, 3}) || !slices.Equal(seen, all) {
			t.Fatalf("pages of %v gave %v; want 4, 4 and 3 of every customer once in key order %v", sizes, seen, all)
		}
	})
}
