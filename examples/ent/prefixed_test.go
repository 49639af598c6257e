package entexample

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/ent/ent"
	"github.com/ulidflake/ulidflake/examples/ent/ent/customer"
	"github.com/ulidflake/ulidflake/examples/ent/ent/invoice"
	"github.com/ulidflake/ulidflake/examples/ent/idtype"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestEntPrefixed: a Customer's key is an idtype.CustomerID (cus_...),
// stored as bigint DEFAULT ulid_flake(), and an Invoice refers to it by a
// customer_id of the same type.
func TestEntPrefixed(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		client := open(t, db)
		rows, err := db.Query(ctx, `SELECT table_name || '.' || column_name, data_type, coalesce(column_default, '')
			FROM information_schema.columns WHERE (table_name, column_name) IN (('customers', 'id'), ('invoices', 'customer_id'))
			ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (c [3]string, err error) {
			return c, r.Scan(&c[0], &c[1], &c[2])
		})
		if err != nil || len(cols) != 2 || cols[0] != [3]string{"customers.id", "bigint", "ulid_flake()"} || cols[1] != [3]string{"invoices.customer_id", "bigint", ""} {
			t.Fatalf("columns = %q, %v; want bigint, the key DEFAULT ulid_flake()", cols, err)
		}
		start := time.Now()

		// Keys from DEFAULT ulid_flake(), single and bulk, and one made in Go.
		c, err := client.Customer.Create().SetName("ada").Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		id, err := ulidflake.New()
		if err != nil {
			t.Fatal(err)
		}
		goID := idtype.CustomerID{ID: id}
		bulk, err := client.Customer.CreateBulk(client.Customer.Create().SetName("b1"), client.Customer.Create().SetName("b2")).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// (ent takes IDs in a bulk all from Go or all from the database.)
		g, err := client.Customer.CreateBulk(client.Customer.Create().SetID(goID).SetName("go-made")).Save(ctx)
		if err != nil || g[0].ID != goID {
			t.Fatalf("CreateBulk with a Go ID: %+v, %v; want %s", g, err, goID)
		}
		keys := []idtype.CustomerID{c.ID, bulk[0].ID, bulk[1].ID, goID}
		end := time.Now()
		seen := map[idtype.CustomerID]bool{}
		for _, k := range keys {
			if k.IsZero() || seen[k] || ulidflake.DefaultEpoch().Time(k.ID).Before(start.Truncate(time.Millisecond).Add(-time.Millisecond)) || ulidflake.DefaultEpoch().Time(k.ID).After(end.Add(time.Millisecond)) {
				t.Errorf("key %s: zero, repeated, or its time %v outside [%v, %v]", k, ulidflake.DefaultEpoch().Time(k.ID), start, end)
			}
			seen[k] = true
		}

		// The foreign key, by entity and by ID.
		inv, err := client.Invoice.Create().SetCustomer(c).SetTotal(4900).Save(ctx)
		if err != nil || inv.CustomerID != c.ID {
			t.Fatalf("invoice: %+v, %v", inv, err)
		}
		if _, err := client.Invoice.Create().SetCustomerID(goID).SetTotal(900).Save(ctx); err != nil {
			t.Fatal(err)
		}

		// Read back by the prefixed key, a list of them, and the reference.
		got, err := client.Customer.Get(ctx, c.ID)
		if err != nil || got.ID != c.ID || got.Name != "ada" {
			t.Fatalf("Get(%s) = %+v, %v", c.ID, got, err)
		}
		if n, err := client.Customer.Query().Where(customer.IDIn(keys...)).Count(ctx); err != nil || n != len(keys) {
			t.Fatalf("IDIn: %d, %v", n, err)
		}
		gi, err := client.Invoice.Query().Where(invoice.CustomerID(c.ID)).WithCustomer().Only(ctx)
		if err != nil || gi.ID != inv.ID || gi.CustomerID != c.ID || gi.Edges.Customer == nil || gi.Edges.Customer.ID != c.ID {
			t.Fatalf("invoice of %s: %+v, %v", c.ID, gi, err)
		}
		ci, err := client.Customer.Query().Where(customer.ID(goID)).QueryInvoices().Only(ctx)
		if err != nil || ci.CustomerID != goID {
			t.Fatalf("invoices of %s: %+v, %v", goID, ci, err)
		}

		// JSON: the prefix and the 13 characters.
		b, err := json.Marshal(gi)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			CustomerID string `json:"customer_id"`
			Edges      struct {
				Customer struct {
					ID string `json:"id"`
				} `json:"customer"`
			} `json:"edges"`
		}
		if err := json.Unmarshal(b, &out); err != nil || out.CustomerID != c.ID.String() || out.Edges.Customer.ID != c.ID.String() ||
			!regexp.MustCompile(`^cus_[0-9A-Z]{13}$`).MatchString(out.CustomerID) {
			t.Fatalf("JSON %s (%v): want customer_id and edges.customer.id %q", b, err, c.ID)
		}

		// Parsing refuses another prefix or none; the zero key is never written.
		for _, s := range []string{strings.Replace(c.ID.String(), "cus_", "inv_", 1), c.ID.ID.String()} {
			var k idtype.CustomerID
			if err := k.UnmarshalText([]byte(s)); !errors.Is(err, ulidflake.ErrPrefix) {
				t.Errorf("UnmarshalText(%q): %v, want ErrPrefix", s, err)
			}
			if err := json.Unmarshal([]byte(`{"customer_id":"`+s+`"}`), new(ent.Invoice)); !errors.Is(err, ulidflake.ErrPrefix) {
				t.Errorf("JSON customer_id %q: %v, want ErrPrefix", s, err)
			}
		}
		if _, err := client.Invoice.Create().SetCustomerID(idtype.CustomerID{}).SetTotal(1).Save(ctx); !errors.Is(err, ulidflake.ErrZeroID) {
			t.Fatalf("zero customer_id: %v, want ErrZeroID", err)
		}
	})
}
