// Package sqlxexample shows sqlx with Ulid-Flake IDs: struct scanning into
// prefixed ID types (CustomerID, cus_00EZJCRCB4650; InvoiceID) and plain
// ulidflake.ID fields, sqlx.In with slices of either, named inserts of a
// slice with IDs made in Go, and keyset pagination whose first page is the
// same query as the next ones. The schema is plain bigint columns, keys with
// DEFAULT ulid_flake(), installed after the ulidflake migrations (Setup).
package sqlxexample

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/ulidflake/ulidflake"
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

// CustomerPrefix names CustomerID's prefix. It is exported so that code
// generators and other packages can name the type CustomerID stands for.
type CustomerPrefix struct{}

// Prefix returns "cus".
func (CustomerPrefix) Prefix() string { return "cus" }

// CustomerID is a customer's key: cus_00EZJCRCB4650 in text and JSON, a
// bigint in PostgreSQL.
type CustomerID = ulidflake.Prefixed[CustomerPrefix]

// InvoicePrefix names InvoiceID's prefix.
type InvoicePrefix struct{}

// Prefix returns "inv".
func (InvoicePrefix) Prefix() string { return "inv" }

// InvoiceID is an invoice's key: inv_00EZJCRCB4650.
type InvoiceID = ulidflake.Prefixed[InvoicePrefix]

// Customer is a row of customers; its key comes from DEFAULT ulid_flake().
type Customer struct {
	ID   CustomerID `db:"id" json:"id"`
	Name string     `db:"name" json:"name"`
}

// Invoice is a row of invoices; NewInvoices makes its key in Go.
type Invoice struct {
	ID         InvoiceID  `db:"id" json:"id"`
	CustomerID CustomerID `db:"customer_id" json:"customer_id"`
	Total      int        `db:"total" json:"total"`
}

// Line is a row of invoice_lines, keyed by a plain ulidflake.ID.
type Line struct {
	ID        ulidflake.ID `db:"id" json:"id"`
	InvoiceID InvoiceID    `db:"invoice_id" json:"invoice_id"`
	Item      string       `db:"item" json:"item"`
}

// CreateCustomer inserts a customer; PostgreSQL makes the key (DEFAULT
// ulid_flake()) and RETURNING scans it into the struct.
func CreateCustomer(ctx context.Context, db sqlx.QueryerContext, name string) (Customer, error) {
	var c Customer
	err := sqlx.GetContext(ctx, db, &c, `INSERT INTO customers (name) VALUES ($1) RETURNING id, name`, name)
	return c, err
}

// NewInvoices gives each invoice without a key one made in Go, then inserts
// them all in one statement (a named insert of a slice).
func NewInvoices(ctx context.Context, db sqlx.ExtContext, invs []Invoice) error {
	for i := range invs {
		if !invs[i].ID.IsZero() {
			continue
		}
		id, err := ulidflake.New()
		if err != nil {
			return err
		}
		invs[i].ID = InvoiceID{ID: id}
	}
	_, err := sqlx.NamedExecContext(ctx, db,
		`INSERT INTO invoices (id, customer_id, total) VALUES (:id, :customer_id, :total)`, invs)
	return err
}

// CreateLines inserts lines; PostgreSQL makes their keys, returned in the
// order of items.
func CreateLines(ctx context.Context, db sqlx.QueryerContext, invoice InvoiceID, items []string) ([]Line, error) {
	var lines []Line
	err := sqlx.SelectContext(ctx, db, &lines, `INSERT INTO invoice_lines (invoice_id, item)
		SELECT $1, item FROM unnest($2::text[]) WITH ORDINALITY AS t(item, n) ORDER BY n
		RETURNING id, invoice_id, item`, invoice, items)
	return lines, err
}

// selectIn runs a query whose "?" placeholders sqlx.In expands (a slice
// becomes one placeholder per element), rebound to $n.
func selectIn(ctx context.Context, db *sqlx.DB, dest any, query string, args ...any) error {
	q, args, err := sqlx.In(query, args...)
	if err != nil {
		return fmt.Errorf("sqlxexample: %w", err)
	}
	return db.SelectContext(ctx, dest, db.Rebind(q), args...)
}

// CustomersByID returns the customers with the given keys, in key order:
// sqlx.In with a slice of prefixed IDs. A zero key is refused
// (ulidflake.ErrZeroID), and so is an empty slice (sqlx.In's error).
func CustomersByID(ctx context.Context, db *sqlx.DB, ids []CustomerID) ([]Customer, error) {
	var cs []Customer
	err := selectIn(ctx, db, &cs, `SELECT id, name FROM customers WHERE id IN (?) ORDER BY id`, ids)
	return cs, err
}

// LinesByID returns the lines with the given keys, in key order: sqlx.In
// with a slice of ulidflake.ID.
func LinesByID(ctx context.Context, db *sqlx.DB, ids []ulidflake.ID) ([]Line, error) {
	var ls []Line
	err := selectIn(ctx, db, &ls, `SELECT id, invoice_id, item FROM invoice_lines WHERE id IN (?) ORDER BY id`, ids)
	return ls, err
}

// CustomersAfter returns a page of at most limit customers whose keys are
// above after, in key order. The zero CustomerID gives the first page:
// ulidflake.Bound writes it as 0, below every ID, where the ID itself would
// refuse to be written.
func CustomersAfter(ctx context.Context, db sqlx.QueryerContext, after CustomerID, limit int) ([]Customer, error) {
	var cs []Customer
	err := sqlx.SelectContext(ctx, db, &cs, `SELECT id, name FROM customers WHERE id > $1 ORDER BY id LIMIT $2`,
		ulidflake.Bound(after.ID), limit)
	return cs, err
}
