package bunexample

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestBunPrefixed: Customer's key is a CustomerID (cus_...), stored as
// bigint DEFAULT ulid_flake() and read back through RETURNING, and
// Invoice refers to it by a customer_id of the same type.
func TestBunPrefixed(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		bdb := open(t, db)
		rows, err := bdb.QueryContext(ctx, `SELECT table_name || '.' || column_name, data_type, coalesce(column_default, '')
			FROM information_schema.columns WHERE (table_name, column_name) IN (('customers', 'id'), ('invoices', 'customer_id'))
			ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		var cols [][3]string
		for rows.Next() {
			var c [3]string
			if err := rows.Scan(&c[0], &c[1], &c[2]); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, c)
		}
		if err := rows.Err(); err != nil || len(cols) != 2 || cols[0] != [3]string{"customers.id", "bigint", "ulid_flake()"} || cols[1] != [3]string{"invoices.customer_id", "bigint", ""} {
			t.Fatalf("columns = %q, %v; want bigint, the key DEFAULT ulid_flake()", cols, err)
		}
		start := time.Now()

		// Keys from DEFAULT ulid_flake(), single and bulk, and one made in Go.
		c := &Customer{Name: "ada"}
		if _, err := bdb.NewInsert().Model(c).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		bulk := []Customer{{Name: "b1"}, {Name: "b2"}}
		if _, err := bdb.NewInsert().Model(&bulk).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		id, err := ulidflake.New()
		if err != nil {
			t.Fatal(err)
		}
		g := &Customer{ID: CustomerID{ID: id}, Name: "go-made"}
		if _, err := bdb.NewInsert().Model(g).Exec(ctx); err != nil || g.ID.ID != id {
			t.Fatalf("insert with a Go ID: %s, %v", g.ID, err)
		}
		end := time.Now()
		seen := map[CustomerID]bool{}
		for _, k := range []CustomerID{c.ID, bulk[0].ID, bulk[1].ID, g.ID} {
			if k.IsZero() || seen[k] || ulidflake.DefaultEpoch().Time(k.ID).Before(start.Truncate(time.Millisecond).Add(-time.Millisecond)) || ulidflake.DefaultEpoch().Time(k.ID).After(end.Add(time.Millisecond)) {
				t.Errorf("key %s: zero, repeated, or its time %v outside [%v, %v]", k, ulidflake.DefaultEpoch().Time(k.ID), start, end)
			}
			seen[k] = true
		}

		// The foreign key; read back with the relation.
		inv := &Invoice{CustomerID: c.ID, Total: 4900}
		if _, err := bdb.NewInsert().Model(inv).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var got Invoice
		if err := bdb.NewSelect().Model(&got).Relation("Customer").Where("invoice.customer_id = ?", c.ID).Scan(ctx); err != nil ||
			got.ID != inv.ID || got.CustomerID != c.ID || got.Customer == nil || got.Customer.ID != c.ID || got.Customer.Name != "ada" {
			t.Fatalf("invoice of %s: %+v, %v", c.ID, got, err)
		}
		var byKey Customer
		if err := bdb.NewSelect().Model(&byKey).Where("id = ?", g.ID).Scan(ctx); err != nil || byKey != *g {
			t.Fatalf("customer %s: %+v, %v", g.ID, byKey, err)
		}

		// JSON: the prefix and the 13 characters.
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			CustomerID string
			Customer   struct{ ID string }
		}
		if err := json.Unmarshal(b, &out); err != nil || out.CustomerID != c.ID.String() || out.Customer.ID != c.ID.String() ||
			!regexp.MustCompile(`^cus_[0-9A-Z]{13}$`).MatchString(out.CustomerID) {
			t.Fatalf("JSON %s (%v): want CustomerID and Customer.ID %q", b, err, c.ID)
		}

		// Parsing refuses another prefix or none.
		for _, s := range []string{strings.Replace(c.ID.String(), "cus_", "inv_", 1), c.ID.ID.String()} {
			var k CustomerID
			if err := k.UnmarshalText([]byte(s)); !errors.Is(err, ulidflake.ErrPrefix) {
				t.Errorf("UnmarshalText(%q): %v, want ErrPrefix", s, err)
			}
			if err := json.Unmarshal([]byte(`{"CustomerID":"`+s+`"}`), new(Invoice)); !errors.Is(err, ulidflake.ErrPrefix) {
				t.Errorf("JSON CustomerID %q: %v, want ErrPrefix", s, err)
			}
		}
		// A zero reference is never written: as for ulidflake.ID, the
		// statement fails as a syntax error (see Post.BeforeAppendModel).
		_, err = bdb.NewInsert().Model(&Invoice{Total: 1}).Exec(ctx)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42601" {
			t.Fatalf("zero customer_id: %v, want a syntax error (42601)", err)
		}
	})
}
