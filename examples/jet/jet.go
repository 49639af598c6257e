// Package jetexample shows go-jet with Ulid-Flake IDs. jet generates the
// model structs and the SQL builder (gen/public) from a live database;
// package jetgen customises its template so that the key and reference
// fields are ulidflake types (idtype.CustomerID, idtype.InvoiceID,
// ulidflake.ID) and jet scans into them and binds them as bigints. The
// functions here are the queries an application writes with them: keys from
// DEFAULT ulid_flake() and made in Go, lists of keys, and keyset pagination
// whose first page is the same query as the next ones.
package jetexample

import (
	"context"
	"database/sql"
	_ "embed"

	pg "github.com/go-jet/jet/v2/postgres"
	"github.com/go-jet/jet/v2/qrm"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/jet/gen/public/model"
	"github.com/ulidflake/ulidflake/examples/jet/gen/public/table"
	"github.com/ulidflake/ulidflake/examples/jet/idtype"
	"github.com/ulidflake/ulidflake/migrations"
)

// Schema creates the example's tables; the ulidflake migrations must run first.
//
//go:embed schema.sql
var Schema string

// Setup installs the ulidflake migrations, then Schema.
func Setup(ctx context.Context, db *sql.DB) error {
	if _, err := migrations.Migrate(ctx, db); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, Schema)
	return err
}

// CreateCustomer inserts a customer without a key: PostgreSQL makes it
// (DEFAULT ulid_flake()), and RETURNING scans it into the model.
func CreateCustomer(ctx context.Context, db qrm.DB, name string) (model.Customers, error) {
	var c model.Customers
	err := table.Customers.INSERT(table.Customers.Name).
		MODEL(model.Customers{Name: name}).
		RETURNING(table.Customers.AllColumns).
		QueryContext(ctx, db, &c)
	return c, err
}

// NewInvoices gives each invoice without a key one made in Go, then inserts
// them all in one statement.
func NewInvoices(ctx context.Context, db qrm.DB, invs []model.Invoices) error {
	for i := range invs {
		if !invs[i].ID.IsZero() {
			continue
		}
		id, err := ulidflake.New()
		if err != nil {
			return err
		}
		invs[i].ID = idtype.InvoiceID{ID: id}
	}
	_, err := table.Invoices.INSERT(table.Invoices.AllColumns).MODELS(invs).ExecContext(ctx, db)
	return err
}

// CreateLines inserts one line per item; PostgreSQL makes the keys.
func CreateLines(ctx context.Context, db qrm.DB, invoice idtype.InvoiceID, items ...string) ([]model.InvoiceLines, error) {
	rows := make([]model.InvoiceLines, len(items))
	for i, item := range items {
		rows[i] = model.InvoiceLines{InvoiceID: invoice, Item: item}
	}
	var lines []model.InvoiceLines
	err := table.InvoiceLines.INSERT(table.InvoiceLines.InvoiceID, table.InvoiceLines.Item).
		MODELS(rows).
		RETURNING(table.InvoiceLines.AllColumns).
		QueryContext(ctx, db, &lines)
	return lines, err
}

// ids turns keys into jet's bigint expressions, for IN lists.
func ids[K interface{ Int64() int64 }](keys []K) []pg.Expression {
	es := make([]pg.Expression, len(keys))
	for i, k := range keys {
		es[i] = pg.Int64(k.Int64())
	}
	return es
}

// CustomersByID returns the customers with the given keys, in key order.
func CustomersByID(ctx context.Context, db qrm.DB, keys ...idtype.CustomerID) ([]model.Customers, error) {
	var cs []model.Customers
	err := pg.SELECT(table.Customers.AllColumns).FROM(table.Customers).
		WHERE(table.Customers.ID.IN(ids(keys)...)).
		ORDER_BY(table.Customers.ID).
		QueryContext(ctx, db, &cs)
	return cs, err
}

// CustomerInvoices is a customer with its invoices, as jet's query result
// mapping nests them.
type CustomerInvoices struct {
	model.Customers
	Invoices []model.Invoices
}

// InvoicesOf returns each customer with its invoices, in key order.
func InvoicesOf(ctx context.Context, db qrm.DB, keys ...idtype.CustomerID) ([]CustomerInvoices, error) {
	var out []CustomerInvoices
	err := pg.SELECT(table.Customers.AllColumns, table.Invoices.AllColumns).
		FROM(table.Customers.INNER_JOIN(table.Invoices, table.Invoices.CustomerID.EQ(table.Customers.ID))).
		WHERE(table.Customers.ID.IN(ids(keys)...)).
		ORDER_BY(table.Customers.ID, table.Invoices.ID).
		QueryContext(ctx, db, &out)
	return out, err
}

// CustomersAfter returns a page of at most limit customers whose keys are
// above after, in key order. The zero CustomerID gives the first page: the
// bound goes to jet as its int64, 0, below every ID.
func CustomersAfter(ctx context.Context, db qrm.DB, after idtype.CustomerID, limit int64) ([]model.Customers, error) {
	var cs []model.Customers
	err := pg.SELECT(table.Customers.AllColumns).FROM(table.Customers).
		WHERE(table.Customers.ID.GT(pg.Int64(after.Int64()))).
		ORDER_BY(table.Customers.ID).
		LIMIT(limit).
		QueryContext(ctx, db, &cs)
	return cs, err
}
