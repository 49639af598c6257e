// Package ulident gives ent schemas Ulid-Flake IDs: a mixin for the ID
// field and a hook that makes IDs in Go. Import it, or copy it.
//
// With [ID], the column is bigint DEFAULT ulid_flake() (ent's schema
// migration writes the default) and ent reads the ID back through
// RETURNING, in Create and CreateBulk. With [GoID], the [FillID] hook makes
// each ID in Go before the INSERT, so the application knows it without
// RETURNING; the DEFAULT stays for rows inserted by other means.
//
// The ulidflake migrations must have run (ulid_flake()).
package ulident

import (
	"context"
	"fmt"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"

	"github.com/ulidflake/ulidflake"
)

// ID is a mixin for a Ulid-Flake primary key made by PostgreSQL.
type ID struct{ mixin.Schema }

// Fields declares the id field: bigint DEFAULT ulid_flake(), as ulidflake.ID.
func (ID) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id").
			GoType(ulidflake.ID(0)).
			Immutable().
			Annotations(entsql.DefaultExpr("ulid_flake()")),
	}
}

// GoID is a mixin for a Ulid-Flake primary key made in Go by [FillID].
type GoID struct{ ID }

// Hooks returns [FillID].
func (GoID) Hooks() []ent.Hook { return []ent.Hook{FillID} }

// idSetter is what ent generates for a mutation of a schema with a
// user-defined ID field.
type idSetter interface {
	ID() (ulidflake.ID, bool)
	SetID(ulidflake.ID)
}

// FillID sets a new ID on create mutations that have none. It runs for
// each builder of a CreateBulk too.
func FillID(next ent.Mutator) ent.Mutator {
	return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
		if !m.Op().Is(ent.OpCreate) {
			return next.Mutate(ctx, m)
		}
		s, ok := m.(idSetter)
		if !ok {
			return nil, fmt.Errorf("ulident: %s mutation has no SetID(ulidflake.ID): use the ulident.GoID mixin", m.Type())
		}
		if id, set := s.ID(); !set || id.IsZero() {
			id, err := ulidflake.New()
			if err != nil {
				return nil, fmt.Errorf("ulident: new ID for %s: %w", m.Type(), err)
			}
			s.SetID(id)
		}
		return next.Mutate(ctx, m)
	})
}
