package bunexample

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// recorder is a bun query hook that keeps the text of every query.
type recorder struct {
	mu      sync.Mutex
	queries []string
}

func (r *recorder) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (r *recorder) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	r.mu.Lock()
	r.queries = append(r.queries, e.Query)
	r.mu.Unlock()
}

// take returns the queries run since the last call, and forgets them.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queries
	r.queries = nil
	return q
}

// TestBunPages walks every page of customers from the zero cursor: each
// page is one query, the first the same as the next ones but for the
// cursor (bun writes it into the text), and the pages hold every key
// once, in order.
func TestBunPages(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		bdb := open(t, db)
		// 11 customers: 5 with keys from PostgreSQL, 6 made in Go.
		all := make([]Customer, 11)
		for i := range all {
			all[i].Name = fmt.Sprint(i)
			if i >= 5 {
				id, err := ulidflake.New()
				if err != nil {
					t.Fatal(err)
				}
				all[i].ID = CustomerID{ID: id}
			}
			if _, err := bdb.NewInsert().Model(&all[i]).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		slices.SortFunc(all, func(a, b Customer) int { return a.ID.Compare(b.ID.ID) })

		// The CustomerID itself refuses to be the zero cursor.
		var pgErr *pgconn.PgError
		err := bdb.NewSelect().Model(new([]Customer)).Where("id > ?", CustomerID{}).Scan(ctx)
		if !errors.As(err, &pgErr) || pgErr.Code != "42601" {
			t.Fatalf("zero CustomerID as the cursor: %v, want a syntax error (42601)", err)
		}

		// Pages of 4 from the zero cursor: 4, 4, 3, then none.
		rec := &recorder{}
		recorded := bdb.WithQueryHook(rec)
		var cursor CustomerID
		var pages [][]Customer
		var first string
		for pass := 0; ; pass++ {
			if pass > 11 { // a cursor that does not move would loop forever
				t.Fatal("more pages than customers: the cursor does not advance")
			}
			page, err := CustomersAfter(ctx, recorded, cursor, 4)
			if err != nil {
				t.Fatal(err)
			}
			q := rec.take()
			if pass == 0 && len(q) == 1 {
				first = q[0]
			}
			want := strings.Replace(first, " > 0)", fmt.Sprintf(" > %d)", int64(cursor.ID)), 1)
			if len(q) != 1 || !strings.Contains(first, " > 0)") || q[0] != want {
				t.Fatalf("page %d ran %q; want one query, the first page's with the cursor: %q", pass, q, want)
			}
			if len(page) == 0 {
				break
			}
			pages = append(pages, page)
			cursor = page[len(page)-1].ID
		}
		sizes := []int{}
		for _, p := range pages {
			sizes = append(sizes, len(p))
		}
		if seen := slices.Concat(pages...); !slices.Equal(sizes, []int{4, 4, 3}) || !slices.Equal(seen, all) {
			t.Fatalf("pages of %v gave %+v; want 4, 4 and 3 of every customer once in key order %+v", sizes, seen, all)
		}
	})
}
