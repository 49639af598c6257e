// Package bobexample shows Bob with Ulid-Flake IDs. bobgen-psql generates
// the models, factories and where helpers (models, factory, dbinfo,
// dberrors) from a live database; bobgen.yaml's type replacements make the
// key and reference columns ulidflake types (idtype.CustomerID,
// idtype.InvoiceID, ulidflake.ID), and its types section tells the
// factories how to make a random one (a new ID). The functions here are
// the queries an application writes with them: keys from DEFAULT
// ulid_flake() and made in Go (by a hook), lists of keys, and keyset
// pagination whose first page is the same query as the next ones.
package bobexample

import (
	"context"
	"database/sql"
	_ "embed"

	"github.com/aarondl/opt/omit"
	"github.com/stephenafamo/bob"
	"github.com/stephenafamo/bob/dialect/psql"
	"github.com/stephenafamo/bob/dialect/psql/sm"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/bob/idtype"
	"github.com/ulidflake/ulidflake/examples/bob/models"
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

func init() {
	models.Invoices.BeforeInsertHooks.AppendHooks(FillInvoiceID)
}

// FillInvoiceID is a hook on inserts into invoices (registered by this
// package's init): it gives an invoice without a key one made in Go, so
// that every invoice inserted through Bob, by the factories too, has one
// before the INSERT is sent.
func FillInvoiceID(ctx context.Context, _ bob.Executor, s *models.InvoiceSetter) (context.Context, error) {
	if s.ID.IsValue() {
		return ctx, nil
	}
	id, err := ulidflake.New()
	if err != nil {
		return ctx, err
	}
	s.ID = omit.From(idtype.InvoiceID{ID: id})
	return ctx, nil
}

// CreateCustomer inserts a customer without a key: PostgreSQL makes it
// (DEFAULT ulid_flake()), and RETURNING scans it into the model.
func CreateCustomer(ctx context.Context, exec bob.Executor, name string) (*models.Customer, error) {
	return models.Customers.Insert(&models.CustomerSetter{Name: omit.From(name)}).One(ctx, exec)
}

// CustomersByID returns the customers with the given keys, in key order,
// through the generated where helper, typed idtype.CustomerID.
func CustomersByID(ctx context.Context, exec bob.Executor, keys ...idtype.CustomerID) (models.CustomerSlice, error) {
	return models.Customers.Query(
		models.SelectWhere.Customers.ID.In(keys...),
		sm.OrderBy(models.Customers.Columns.ID),
	).All(ctx, exec)
}

// CustomersAfter returns a page of at most limit customers whose keys are
// above after, in key order. The zero CustomerID gives the first page:
// ulidflake.Bound writes it as 0, below every ID. (The generated helper
// SelectWhere.Customers.ID.GT(after) would send the ID itself, which
// refuses to be the zero ID: ulidflake.ErrZeroID.)
func CustomersAfter(ctx context.Context, exec bob.Executor, after idtype.CustomerID, limit int64) (models.CustomerSlice, error) {
	return models.Customers.Query(
		sm.Where(models.Customers.Columns.ID.GT(psql.Arg(ulidflake.Bound(after.ID)))),
		sm.OrderBy(models.Customers.Columns.ID),
		sm.Limit(limit),
	).All(ctx, exec)
}
