package sqlcexample

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/sqlc/dbpgx"
	"github.com/ulidflake/ulidflake/examples/sqlc/dbstd"
	"github.com/ulidflake/ulidflake/examples/sqlc/idtype"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestPrefixed: customers.id and invoices.customer_id, bigint columns
// (the domain ulid_flake_id), are idtype.CustomerID (cus_...) in the code
// sqlc generates for pgx/v5, in every query exec mode, and for
// database/sql, on lib/pq and on pgx's stdlib.
func TestPrefixed(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		withSchema(t, db)
		rows, err := db.Query(ctx, `SELECT table_name || '.' || column_name, data_type, domain_name, coalesce(column_default, '')
			FROM information_schema.columns WHERE (table_name, column_name) IN (('customers', 'id'), ('invoices', 'customer_id'))
			ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (c [4]string, err error) {
			return c, r.Scan(&c[0], &c[1], &c[2], &c[3])
		})
		if err != nil || len(cols) != 2 || cols[0] != [4]string{"customers.id", "bigint", "ulid_flake_id", "ulid_flake()"} ||
			cols[1] != [4]string{"invoices.customer_id", "bigint", "ulid_flake_id", ""} {
			t.Fatalf("columns = %q, %v; want bigint (ulid_flake_id), the key DEFAULT ulid_flake()", cols, err)
		}

		drivers(t, db, func(t *testing.T, pool *pgxpool.Pool) {
			testPrefixedPgx(t, dbpgx.New(pool))
		}, func(t *testing.T, sdb *sql.DB) {
			testPrefixedStd(t, dbstd.New(sdb))
		})

		// Parsing refuses another prefix or none.
		for _, s := range []string{"inv_00EZJCRCB4650", "00EZJCRCB4650"} {
			var id idtype.CustomerID
			if err := id.UnmarshalText([]byte(s)); !errors.Is(err, ulidflake.ErrPrefix) {
				t.Errorf("UnmarshalText(%q): %v, want ErrPrefix", s, err)
			}
			if err := json.Unmarshal([]byte(`{"CustomerID":"`+s+`"}`), new(dbpgx.Invoice)); !errors.Is(err, ulidflake.ErrPrefix) {
				t.Errorf("JSON CustomerID %q: %v, want ErrPrefix", s, err)
			}
		}
	})
}

func testPrefixedPgx(t *testing.T, q *dbpgx.Queries) {
	ctx := context.Background()
	start := time.Now()
	c, err := q.CreateCustomer(ctx, "ada") // the key from DEFAULT ulid_flake()
	if err != nil {
		t.Fatal(err)
	}
	goID := idtype.CustomerID{ID: newID(t)} // a key made in Go
	g, err := q.CreateCustomerWithID(ctx, dbpgx.CreateCustomerWithIDParams{ID: goID, Name: "go-made"})
	if err != nil || g.ID != goID {
		t.Fatalf("CreateCustomerWithID = %+v, %v; want ID %s", g, err, goID)
	}
	got, err := q.GetCustomer(ctx, c.ID)
	if err != nil || got != c {
		t.Fatalf("GetCustomer = %+v, %v; want %+v", got, err, c)
	}
	inv, err := q.CreateInvoice(ctx, dbpgx.CreateInvoiceParams{CustomerID: c.ID, Total: 4900})
	if err != nil {
		t.Fatal(err)
	}
	row, err := q.GetInvoice(ctx, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	list, err := q.ListInvoicesByCustomer(ctx, c.ID)
	if err != nil || len(list) != 1 || list[0] != inv {
		t.Fatalf("ListInvoicesByCustomer = %+v, %v; want [%+v]", list, err, inv)
	}
	checkPrefixed(t, start, c, g, inv, row)
	if _, err := q.CreateInvoice(ctx, dbpgx.CreateInvoiceParams{Total: 1}); !errors.Is(err, ulidflake.ErrZeroID) {
		t.Fatalf("zero customer_id: %v, want ErrZeroID", err)
	}
}

// testPrefixedStd is testPrefixedPgx on database/sql; dbstd's structs
// convert to dbpgx's for the shared checks.
func testPrefixedStd(t *testing.T, q *dbstd.Queries) {
	ctx := context.Background()
	start := time.Now()
	c, err := q.CreateCustomer(ctx, "ada")
	if err != nil {
		t.Fatal(err)
	}
	goID := idtype.CustomerID{ID: newID(t)}
	g, err := q.CreateCustomerWithID(ctx, dbstd.CreateCustomerWithIDParams{ID: goID, Name: "go-made"})
	if err != nil || g.ID != goID {
		t.Fatalf("CreateCustomerWithID = %+v, %v; want ID %s", g, err, goID)
	}
	got, err := q.GetCustomer(ctx, c.ID)
	if err != nil || got != c {
		t.Fatalf("GetCustomer = %+v, %v; want %+v", got, err, c)
	}
	inv, err := q.CreateInvoice(ctx, dbstd.CreateInvoiceParams{CustomerID: c.ID, Total: 4900})
	if err != nil {
		t.Fatal(err)
	}
	row, err := q.GetInvoice(ctx, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	list, err := q.ListInvoicesByCustomer(ctx, c.ID)
	if err != nil || len(list) != 1 || list[0] != inv {
		t.Fatalf("ListInvoicesByCustomer = %+v, %v; want [%+v]", list, err, inv)
	}
	checkPrefixed(t, start, dbpgx.Customer(c), dbpgx.Customer(g), dbpgx.Invoice(inv), dbpgx.GetInvoiceRow(row))
	if _, err := q.CreateInvoice(ctx, dbstd.CreateInvoiceParams{Total: 1}); !errors.Is(err, ulidflake.ErrZeroID) {
		t.Fatalf("zero customer_id: %v, want ErrZeroID", err)
	}
}

// checkPrefixed: the keys are new and distinct, the invoice refers to c and
// reads back with it, and JSON shows cus_ and the 13 characters.
func checkPrefixed(t *testing.T, start time.Time, c, g dbpgx.Customer, inv dbpgx.Invoice, row dbpgx.GetInvoiceRow) {
	t.Helper()
	within(t, start, time.Now(), c.ID.ID, g.ID.ID, inv.ID)
	if c.ID == g.ID || inv.CustomerID != c.ID {
		t.Fatalf("customers %s, %s; invoice %+v", c.ID, g.ID, inv)
	}
	if row != (dbpgx.GetInvoiceRow{ID: inv.ID, Total: 4900, CustomerID: c.ID, CustomerName: "ada"}) {
		t.Fatalf("GetInvoice = %+v; want customer %s", row, c.ID)
	}
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ CustomerID string }
	if err := json.Unmarshal(b, &out); err != nil || out.CustomerID != c.ID.String() || !regexp.MustCompile(`^cus_[0-9A-Z]{13}$`).MatchString(out.CustomerID) ||
		!strings.HasSuffix(out.CustomerID, c.ID.ID.String()) {
		t.Fatalf("JSON %s (%v): want CustomerID %q", b, err, c.ID)
	}
}
