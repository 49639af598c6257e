package ulident_test

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"

	"github.com/ulidflake/ulidflake/examples/ent/ulident"
)

// Order is an ent schema whose ID PostgreSQL makes (DEFAULT ulid_flake()).
type Order struct{ ent.Schema }

func (Order) Mixin() []ent.Mixin { return []ent.Mixin{ulident.ID{}} }

func (Order) Fields() []ent.Field { return []ent.Field{field.Int("total")} }

// Invoice is an ent schema whose ID the FillID hook makes in Go. The program
// must import the generated runtime package (_ "yourmodule/ent/runtime"),
// which installs schema hooks.
type Invoice struct{ ent.Schema }

func (Invoice) Mixin() []ent.Mixin { return []ent.Mixin{ulident.GoID{}} }

func Example() {
	// In ent/schema, give each schema one of the mixins; then go generate ./ent.
	_ = []ent.Interface{Order{}, Invoice{}}
}
