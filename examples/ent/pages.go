package entexample

import (
	"context"

	"entgo.io/ent/dialect/sql"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/ent/ent"
	"github.com/ulidflake/ulidflake/examples/ent/ent/customer"
	"github.com/ulidflake/ulidflake/examples/ent/ent/predicate"
	"github.com/ulidflake/ulidflake/examples/ent/idtype"
)

// CustomersAfter returns a page of at most limit customers whose keys are
// above after, in key order. The zero CustomerID gives the first page, in
// the same query: sql.FieldGT with ulidflake.Bound writes it as 0, below
// every ID. (The generated customer.IDGT(after) takes only a CustomerID,
// which refuses to be written while zero: ulidflake.ErrZeroID.)
func CustomersAfter(ctx context.Context, client *ent.Client, after idtype.CustomerID, limit int) ([]*ent.Customer, error) {
	return client.Customer.Query().
		Where(predicate.Customer(sql.FieldGT(customer.FieldID, ulidflake.Bound(after.ID)))).
		Order(customer.ByID()).
		Limit(limit).
		All(ctx)
}
