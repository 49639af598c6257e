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
	"path"
	"strings"

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

// Alias names the Go type of f, a field.Int64(...).GoType(T{}) field whose
// T is a generic alias such as idtype.CustomerID =
// ulidflake.Prefixed[CustomerPrefix]: name is the alias ("CustomerID") and
// pkgPath the import path of the package that declares it.
//
// ent names a GoType by reflection, which sees through aliases and prints
// an instantiated generic type with the full import path of its type
// argument, flake.Prefixed[github.com/you/app/idtype.CustomerPrefix]:
// code that does not compile (ent generate fails with "missing import
// path"). Alias makes ent write idtype.CustomerID and import pkgPath
// instead. Do not name that package ids: ent's generated code has local
// variables named ids, which would hide it.
//
// [FillID] makes ulidflake.ID keys only: a prefixed key comes from
// DEFAULT ulid_flake() (as with [ID]) or SetID.
func Alias(f ent.Field, pkgPath, name string) ent.Field { return alias{f, pkgPath, name} }

type alias struct {
	ent.Field
	pkgPath, name string
}

func (a alias) Descriptor() *field.Descriptor {
	d := a.Field.Descriptor()
	if d.Info == nil || d.Info.RType == nil {
		d.Err = fmt.Errorf("ulident.Alias(%q): the field has no GoType", d.Name)
		return d
	}
	pkg := path.Base(a.pkgPath)
	stars := d.Info.Ident[:len(d.Info.Ident)-len(strings.TrimLeft(d.Info.Ident, "*"))] // GoType(&T{})
	d.Info.Ident, d.Info.PkgPath, d.Info.PkgName = stars+pkg+"."+a.name, a.pkgPath, pkg
	d.Info.RType.Ident = pkg + "." + a.name
	return d
}
