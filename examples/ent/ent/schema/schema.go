// Package schema holds the example's ent schemas.
package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/ent/idtype"
	"github.com/ulidflake/ulidflake/examples/ent/ulident"
)

// Author's ID is made by PostgreSQL (DEFAULT ulid_flake()).
type Author struct{ ent.Schema }

// Mixin gives Author its ID.
func (Author) Mixin() []ent.Mixin { return []ent.Mixin{ulident.ID{}} }

// Fields of Author.
func (Author) Fields() []ent.Field { return []ent.Field{field.String("name")} }

// Edges of Author.
func (Author) Edges() []ent.Edge { return []ent.Edge{edge.To("posts", Post.Type)} }

// Post's ID is made in Go (the ulident.FillID hook); its author is optional.
type Post struct{ ent.Schema }

// Mixin gives Post its ID.
func (Post) Mixin() []ent.Mixin { return []ent.Mixin{ulident.GoID{}} }

// Fields of Post.
func (Post) Fields() []ent.Field {
	return []ent.Field{
		field.String("title"),
		field.Int64("author_id").GoType(ulidflake.ID(0)).Optional().Nillable(),
	}
}

// Edges of Post.
func (Post) Edges() []ent.Edge {
	return []ent.Edge{edge.From("author", Author.Type).Ref("posts").Field("author_id").Unique()}
}

// idtypePkg declares idtype.CustomerID, for ulident.Alias.
const idtypePkg = "github.com/ulidflake/ulidflake/examples/ent/idtype"

// Customer's ID is a prefixed ID, idtype.CustomerID (cus_...), made by
// PostgreSQL (DEFAULT ulid_flake()).
type Customer struct{ ent.Schema }

// Fields of Customer.
func (Customer) Fields() []ent.Field {
	return []ent.Field{
		ulident.Alias(field.Int64("id").GoType(idtype.CustomerID{}).Immutable().
			Annotations(entsql.DefaultExpr("ulid_flake()")), idtypePkg, "CustomerID"),
		field.String("name"),
	}
}

// Edges of Customer.
func (Customer) Edges() []ent.Edge { return []ent.Edge{edge.To("invoices", Invoice.Type)} }

// Invoice's ID is made in Go; it refers to its customer by an
// idtype.CustomerID.
type Invoice struct{ ent.Schema }

// Mixin gives Invoice its ID.
func (Invoice) Mixin() []ent.Mixin { return []ent.Mixin{ulident.GoID{}} }

// Fields of Invoice.
func (Invoice) Fields() []ent.Field {
	return []ent.Field{
		ulident.Alias(field.Int64("customer_id").GoType(idtype.CustomerID{}), idtypePkg, "CustomerID"),
		field.Int("total"),
	}
}

// Edges of Invoice.
func (Invoice) Edges() []ent.Edge {
	return []ent.Edge{edge.From("customer", Customer.Type).Ref("invoices").Field("customer_id").Unique().Required()}
}
