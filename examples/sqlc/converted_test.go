package sqlcexample

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake"
	cpgx "github.com/ulidflake/ulidflake/examples/sqlc/converted/dbpgx"
	cstd "github.com/ulidflake/ulidflake/examples/sqlc/converted/dbstd"
	"github.com/ulidflake/ulidflake/examples/sqlc/idtype"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

// The converted recipe maps plain bigint columns: models and parameters
// carry the prefixed types, and a nullable reference is a pointer.
var (
	_ idtype.InvoiceID  = cpgx.Invoice{}.ID
	_ *idtype.InvoiceID = cstd.Invoice{}.ReplacesID
	_ idtype.CustomerID = cstd.InvoiceTotal{}.CustomerID
	_ ulidflake.ID      = cpgx.InvoiceLine{}.ID
)

// convertedDB creates converted/schema.sql's tables with bigserial keys,
// writes two customers and two invoices with a line each under the old
// keys, and converts the three keys with bigserial.ConvertSerial, as
// `ulidflake convert` does, the view in place.
func convertedDB(t *testing.T, db *pgtest.DB) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.Exec(ctx, ConvertedSchema+`;
		INSERT INTO customers (name) VALUES ('old 1'), ('old 2');
		INSERT INTO invoices (customer_id, total) VALUES (1, 100), (2, 200);
		INSERT INTO invoice_lines (invoice_id, amount) VALUES (1, 100), (2, 200);`); err != nil {
		t.Fatal(err)
	}
	sdb, err := sql.Open("postgres", db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	for _, table := range []string{"customers", "invoices", "invoice_lines"} {
		c, err := bigserial.ConvertSerial(ctx, sdb, table, "id")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Apply(ctx, sdb, migrations.DirectionUp); err != nil {
			t.Fatal(err)
		}
	}
	var plain int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns
		WHERE table_name IN ('customers', 'invoices', 'invoice_lines', 'invoice_totals')
			AND column_name IN ('id', 'customer_id', 'replaces_id', 'invoice_id')
			AND data_type = 'bigint' AND domain_name IS NULL`).Scan(&plain); err != nil || plain != 8 {
		t.Fatalf("%d plain bigint ID columns after the conversion (%v), want 8", plain, err)
	}
}

// converted is what testConverted calls, the same on both outputs.
type converted struct {
	customer      func(name string) (cpgx.Customer, error)
	invoice       func(cpgx.CreateInvoiceParams) (cpgx.Invoice, error)
	line          func(idtype.InvoiceID, int32) (cpgx.InvoiceLine, error)
	get           func(idtype.InvoiceID) (cpgx.Invoice, error)
	byText        func(string) (cpgx.Invoice, error)
	byIDs         func([]ulidflake.ID) ([]cpgx.Invoice, error)
	totals        func(idtype.CustomerID) ([]cpgx.InvoiceTotal, error)
	invoicesAfter func(after *idtype.InvoiceID) ([]idtype.InvoiceID, error)
	linesAfter    func(idtype.InvoiceID, *ulidflake.ID) ([]ulidflake.ID, error)
}

func convertedPgx(q *cpgx.Queries) converted {
	ctx := context.Background()
	return converted{
		customer: func(name string) (cpgx.Customer, error) { return q.CreateCustomer(ctx, name) },
		invoice:  func(p cpgx.CreateInvoiceParams) (cpgx.Invoice, error) { return q.CreateInvoice(ctx, p) },
		line: func(inv idtype.InvoiceID, amount int32) (cpgx.InvoiceLine, error) {
			return q.CreateInvoiceLine(ctx, cpgx.CreateInvoiceLineParams{InvoiceID: inv, Amount: amount})
		},
		get:    func(id idtype.InvoiceID) (cpgx.Invoice, error) { return q.GetInvoice(ctx, id) },
		byText: func(s string) (cpgx.Invoice, error) { return q.GetInvoiceByText(ctx, s) },
		byIDs:  func(ids []ulidflake.ID) ([]cpgx.Invoice, error) { return q.ListInvoicesByIDs(ctx, ids) },
		totals: func(c idtype.CustomerID) ([]cpgx.InvoiceTotal, error) { return q.TotalsByCustomer(ctx, c) },
		invoicesAfter: func(after *idtype.InvoiceID) ([]idtype.InvoiceID, error) {
			rows, err := q.ListInvoicesAfter(ctx, cpgx.ListInvoicesAfterParams{After: after, PageSize: pageSize})
			return keysOf(rows, func(i cpgx.Invoice) idtype.InvoiceID { return i.ID }), err
		},
		linesAfter: func(inv idtype.InvoiceID, after *ulidflake.ID) ([]ulidflake.ID, error) {
			rows, err := q.ListLinesAfter(ctx, cpgx.ListLinesAfterParams{InvoiceID: inv, After: nullID(after), PageSize: pageSize})
			return keysOf(rows, func(l cpgx.InvoiceLine) ulidflake.ID { return l.ID }), err
		},
	}
}

func convertedStd(q *cstd.Queries) converted {
	ctx := context.Background()
	return converted{
		customer: func(name string) (cpgx.Customer, error) {
			c, err := q.CreateCustomer(ctx, name)
			return cpgx.Customer(c), err
		},
		invoice: func(p cpgx.CreateInvoiceParams) (cpgx.Invoice, error) {
			i, err := q.CreateInvoice(ctx, cstd.CreateInvoiceParams(p))
			return cpgx.Invoice(i), err
		},
		line: func(inv idtype.InvoiceID, amount int32) (cpgx.InvoiceLine, error) {
			l, err := q.CreateInvoiceLine(ctx, cstd.CreateInvoiceLineParams{InvoiceID: inv, Amount: amount})
			return cpgx.InvoiceLine(l), err
		},
		get: func(id idtype.InvoiceID) (cpgx.Invoice, error) {
			i, err := q.GetInvoice(ctx, id)
			return cpgx.Invoice(i), err
		},
		byText: func(s string) (cpgx.Invoice, error) {
			i, err := q.GetInvoiceByText(ctx, s)
			return cpgx.Invoice(i), err
		},
		byIDs: func(ids []ulidflake.ID) ([]cpgx.Invoice, error) {
			rows, err := q.ListInvoicesByIDs(ctx, ids)
			return keysOf(rows, func(i cstd.Invoice) cpgx.Invoice { return cpgx.Invoice(i) }), err
		},
		totals: func(c idtype.CustomerID) ([]cpgx.InvoiceTotal, error) {
			rows, err := q.TotalsByCustomer(ctx, c)
			return keysOf(rows, func(r cstd.InvoiceTotal) cpgx.InvoiceTotal { return cpgx.InvoiceTotal(r) }), err
		},
		invoicesAfter: func(after *idtype.InvoiceID) ([]idtype.InvoiceID, error) {
			rows, err := q.ListInvoicesAfter(ctx, cstd.ListInvoicesAfterParams{After: after, PageSize: pageSize})
			return keysOf(rows, func(i cstd.Invoice) idtype.InvoiceID { return i.ID }), err
		},
		linesAfter: func(inv idtype.InvoiceID, after *ulidflake.ID) ([]ulidflake.ID, error) {
			rows, err := q.ListLinesAfter(ctx, cstd.ListLinesAfterParams{InvoiceID: inv, After: nullID(after), PageSize: pageSize})
			return keysOf(rows, func(l cstd.InvoiceLine) ulidflake.ID { return l.ID }), err
		},
	}
}

// TestConverted runs the converted recipe on a schema that
// bigserial.ConvertSerial moved off bigserial, with a view over its
// keys: prefixed keys and references on plain bigint columns, a nullable
// reference as a pointer, lists, the view, the server's decoding of the
// prefixed text, and keyset pagination from a nil cursor over old and new
// keys, on pgx (every query exec mode) and database/sql (lib/pq, pgx's
// stdlib).
func TestConverted(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		convertedDB(t, db)
		drivers(t, db, func(t *testing.T, pool *pgxpool.Pool) {
			testConverted(t, db, convertedPgx(cpgx.New(pool)))
		}, func(t *testing.T, sdb *sql.DB) {
			testConverted(t, db, convertedStd(cstd.New(sdb)))
		})
	})
}

func testConverted(t *testing.T, db *pgtest.DB, q converted) {
	start := time.Now()
	c, err := q.customer("ada")
	if err != nil {
		t.Fatal(err)
	}
	first, err := q.invoice(cpgx.CreateInvoiceParams{CustomerID: c.ID, Total: 300})
	if err != nil || first.ReplacesID != nil {
		t.Fatalf("CreateInvoice = %+v, %v; want no ReplacesID", first, err)
	}
	fix, err := q.invoice(cpgx.CreateInvoiceParams{CustomerID: c.ID, ReplacesID: &first.ID, Total: 250})
	if err != nil || fix.ReplacesID == nil || *fix.ReplacesID != first.ID {
		t.Fatalf("CreateInvoice(replaces %s) = %+v, %v", first.ID, fix, err)
	}
	within(t, start, time.Now(), c.ID.ID, first.ID.ID, fix.ID.ID)
	var lines []ulidflake.ID
	for _, amount := range []int32{100, 120, 30} {
		l, err := q.line(fix.ID, amount)
		if err != nil || l.InvoiceID != fix.ID {
			t.Fatalf("CreateInvoiceLine = %+v, %v", l, err)
		}
		lines = append(lines, l.ID)
	}

	if got, err := q.get(fix.ID); err != nil || got.ID != fix.ID || *got.ReplacesID != first.ID {
		t.Errorf("GetInvoice = %+v, %v; want %+v", got, err, fix)
	}
	if got, err := q.byText(fix.ID.String()); err != nil || got.ID != fix.ID {
		t.Errorf("GetInvoiceByText(%s) = %+v, %v", fix.ID, got, err)
	}
	if got, err := q.byIDs([]ulidflake.ID{fix.ID.ID, first.ID.ID}); err != nil || len(got) != 2 || got[0].ID != first.ID || got[1].ID != fix.ID {
		t.Errorf("ListInvoicesByIDs = %+v, %v; want %s, %s", got, err, first.ID, fix.ID)
	}
	totals, err := q.totals(c.ID)
	if err != nil || !slices.Equal(totals, []cpgx.InvoiceTotal{{InvoiceID: first.ID, CustomerID: c.ID}, {InvoiceID: fix.ID, CustomerID: c.ID, LinesTotal: 250}}) {
		t.Errorf("TotalsByCustomer = %+v, %v", totals, err)
	}

	// Every invoice, the two old keys (1 and 2) first, from a nil cursor.
	want := allKeys(t, db, "invoices", func(id int64) idtype.InvoiceID { return idtype.InvoiceID{ID: ulidflake.ID(id)} })
	if got := walk(t, q.invoicesAfter); len(want) < 4 || want[0].Int64() != 1 || !slices.Equal(got, want) {
		t.Errorf("pages of invoices %v, want %v", got, want)
	}
	if got := walk(t, func(after *ulidflake.ID) ([]ulidflake.ID, error) { return q.linesAfter(fix.ID, after) }); !slices.Equal(got, lines) {
		t.Errorf("pages of lines %v, want %v", got, lines)
	}
}
