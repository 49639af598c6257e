package bobexample

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
	"github.com/stephenafamo/bob"
	"github.com/stephenafamo/bob/dialect/psql/sm"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/bob/factory"
	"github.com/ulidflake/ulidflake/examples/bob/idtype"
	"github.com/ulidflake/ulidflake/examples/bob/models"
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

func open(t *testing.T, db *pgtest.DB) bob.DB {
	t.Helper()
	sdb := stdlib.OpenDBFromPool(db.Pool)
	t.Cleanup(func() { sdb.Close() })
	return bob.NewDB(sdb)
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

func byKey(a, b *models.Customer) int { return a.ID.Compare(b.ID.ID) }

func TestBobFactories(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		exec := open(t, db)
		f := factory.New()
		start := time.Now()

		// A customer with two invoices: its key from DEFAULT ulid_flake(),
		// theirs from the FillInvoiceID hook.
		c, err := f.NewCustomer(factory.CustomerMods.AddNewInvoices(2)).Create(ctx, exec)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.R.Invoices) != 2 {
			t.Fatalf("customer %s has %d invoices, want 2", c.ID, len(c.R.Invoices))
		}
		// Three customers whose keys the factory makes in Go (RandomID:
		// bobgen.yaml's random_expr, ulidflake.New).
		goMade, err := f.NewCustomer(factory.CustomerMods.RandomID(nil)).CreateMany(ctx, exec, 3)
		if err != nil {
			t.Fatal(err)
		}
		// An invoice alone: the factory creates the customer it requires.
		inv, err := f.NewInvoice().Create(ctx, exec)
		if err != nil || inv.R.Customer == nil || inv.CustomerID != inv.R.Customer.ID {
			t.Fatalf("invoice %+v, %v: want its new customer in R", inv, err)
		}
		// Lines keyed by plain IDs from DEFAULT ulid_flake().
		lines, err := f.NewInvoiceLine(factory.InvoiceLineMods.WithExistingInvoice(inv)).CreateMany(ctx, exec, 2)
		if err != nil {
			t.Fatal(err)
		}
		end := time.Now()

		customers := append(models.CustomerSlice{c, inv.R.Customer}, goMade...)
		var cks []idtype.CustomerID
		for _, x := range customers {
			cks = append(cks, x.ID)
		}
		distinct(t, cks...)
		iks := []idtype.InvoiceID{c.R.Invoices[0].ID, c.R.Invoices[1].ID, inv.ID}
		distinct(t, iks...)
		distinct(t, lines[0].ID, lines[1].ID)
		for _, id := range []ulidflake.ID{cks[0].ID, cks[4].ID, iks[0].ID, iks[2].ID, lines[0].ID} {
			if ulidflake.DefaultEpoch().Time(id).Before(start.Truncate(time.Millisecond)) || ulidflake.DefaultEpoch().Time(id).After(end) {
				t.Errorf("%s: time %v outside [%v, %v]", id, ulidflake.DefaultEpoch().Time(id), start, end)
			}
		}

		// Read back through the generated code: by key, by a list of keys,
		// and with relationships loaded.
		got, err := models.FindInvoice(ctx, exec, inv.ID)
		if err != nil || got.ID != inv.ID || got.CustomerID != inv.CustomerID || got.Total != inv.Total {
			t.Fatalf("FindInvoice(%s) = %+v, %v; want %+v", inv.ID, got, err, inv)
		}
		list, err := CustomersByID(ctx, exec, cks[4], cks[0], cks[2])
		want := models.CustomerSlice{customers[0], customers[2], customers[4]}
		slices.SortFunc(want, byKey)
		if err != nil || len(list) != 3 {
			t.Fatalf("CustomersByID = %v, %v", list, err)
		}
		for i := range list {
			if list[i].ID != want[i].ID || list[i].Name != want[i].Name {
				t.Errorf("CustomersByID[%d] = %+v, want %+v", i, list[i], want[i])
			}
		}
		loaded, err := models.Customers.Query(
			models.SelectWhere.Customers.ID.EQ(c.ID),
			models.SelectThenLoad.Customer.Invoices(sm.OrderBy(models.Invoices.Columns.ID)),
		).One(ctx, exec)
		wantInv := []idtype.InvoiceID{iks[0], iks[1]}
		slices.SortFunc(wantInv, func(a, b idtype.InvoiceID) int { return a.Compare(b.ID) })
		if err != nil || len(loaded.R.Invoices) != 2 || loaded.R.Invoices[0].ID != wantInv[0] || loaded.R.Invoices[1].ID != wantInv[1] ||
			loaded.R.Invoices[0].CustomerID != c.ID {
			t.Fatalf("customer %s with invoices: %+v, %v", c.ID, loaded, err)
		}

		// The typed where helper refuses the zero key, as every ID parameter does.
		if _, err := models.Customers.Query(models.SelectWhere.Customers.ID.GT(idtype.CustomerID{})).All(ctx, exec); !errors.Is(err, ulidflake.ErrZeroID) {
			t.Fatalf("GT(zero CustomerID): %v, want ErrZeroID", err)
		}

		// JSON carries the prefix.
		b, err := json.Marshal(map[string]any{"invoice": inv.ID, "customer": inv.CustomerID})
		if want := fmt.Sprintf(`{"customer":%q,"invoice":%q}`, inv.CustomerID, inv.ID); err != nil || string(b) != want {
			t.Fatalf("JSON %s, %v; want %s", b, err, want)
		}
	})
}

func TestBobPages(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		exec := open(t, db)
		// 10 customers: 4 with keys from PostgreSQL, 6 made in Go.
		var all models.CustomerSlice
		for i := range 4 {
			c, err := CreateCustomer(ctx, exec, fmt.Sprintf("db%d", i))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, c)
		}
		goMade, err := factory.New().NewCustomer(factory.CustomerMods.RandomID(nil)).CreateMany(ctx, exec, 6)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, goMade...)
		slices.SortFunc(all, byKey)

		// Pages of 4 from the zero cursor: 4, 4, 2, then none.
		var cursor idtype.CustomerID
		var seen []idtype.CustomerID
		var sizes []int
		for pass := 0; ; pass++ {
			if pass > 10 { // a cursor that does not move would loop forever
				t.Fatalf("more pages than customers: the cursor does not advance")
			}
			page, err := CustomersAfter(ctx, exec, cursor, 4)
			if err != nil {
				t.Fatal(err)
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
		var want []idtype.CustomerID
		for _, c := range all {
			want = append(want, c.ID)
		}
		if !slices.Equal(sizes, []int{4, 4, 2}) || !slices.Equal(seen, want) {
			t.Fatalf("pages of %v gave %v, want 4, 4, 2 giving every customer once in key order %v", sizes, seen, want)
		}
	})
}
