// Package schema holds the example's ent schemas.
package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/ulidflake/ulidflake"
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
