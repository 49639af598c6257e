// Package bunexample shows bun with Ulid-Flake IDs, both ways:
//
//   - Author: the ID comes from DEFAULT ulid_flake() in PostgreSQL. The tag
//     `bun:",pk,nullzero,type:bigint,default:ulid_flake()"` makes bun write
//     DEFAULT for an unset (zero) ID and read the ID back through RETURNING,
//     in single and bulk inserts.
//   - Post: the ID is made in Go by a BeforeAppendModel hook, before the
//     INSERT is built, so the application knows it without RETURNING.
//
// A nullable reference is a ulidflake.NullID. Customer's key is a prefixed
// ID (CustomerID: cus_00EZJCRCB4650 in text and JSON, a bigint in
// PostgreSQL) and Invoice refers to it. The ulidflake migrations must have
// run (ulid_flake(), ulid_flake_min, ulid_flake_max).
package bunexample

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/ulidflake/ulidflake"
)

// Author's ID is made by PostgreSQL.
type Author struct {
	bun.BaseModel `bun:"table:authors"`

	ID   ulidflake.ID `bun:",pk,nullzero,type:bigint,default:ulid_flake()"`
	Name string       `bun:",notnull"`
}

// Post's ID is made in Go by its hook; AuthorID is a nullable reference.
type Post struct {
	bun.BaseModel `bun:"table:posts"`

	ID       ulidflake.ID     `bun:",pk,nullzero,type:bigint,default:ulid_flake()"`
	AuthorID ulidflake.NullID `bun:",type:bigint"`
	Author   *Author          `bun:"rel:belongs-to,join:author_id=id"`
	Title    string           `bun:",notnull"`
}

var _ bun.BeforeAppendModelHook = (*Post)(nil)

// BeforeAppendModel fills an unset ID on INSERT. bun calls it for each
// element of a slice too, so bulk inserts get IDs made in Go.
//
// It also refuses a set reference to the zero ID with ulidflake.ErrZeroID.
// bun writes values into the SQL text itself, and when a Valuer fails
// (ulidflake.ID refuses to write the zero ID) it writes "?!(error)" there
// instead: the statement then fails, but as a PostgreSQL syntax error
// (SQLSTATE 42601) that errors.Is cannot match. Checking in the hook gives
// the clear error.
func (p *Post) BeforeAppendModel(_ context.Context, q bun.Query) error {
	switch q.(type) {
	case *bun.InsertQuery, *bun.UpdateQuery:
	default:
		return nil
	}
	if p.AuthorID.Valid && p.AuthorID.ID.IsZero() {
		return fmt.Errorf("post %q: author_id: %w", p.Title, ulidflake.ErrZeroID)
	}
	if _, ok := q.(*bun.InsertQuery); ok && p.ID.IsZero() {
		id, err := ulidflake.New()
		if err != nil {
			return err
		}
		p.ID = id
	}
	return nil
}

// CustomerPrefix names CustomerID's prefix.
type CustomerPrefix struct{}

// Prefix returns "cus".
func (CustomerPrefix) Prefix() string { return "cus" }

// CustomerID is a customer's key: cus_00EZJCRCB4650 in text and JSON, a
// bigint in PostgreSQL.
type CustomerID = ulidflake.Prefixed[CustomerPrefix]

// Customer's prefixed ID is made by PostgreSQL, as Author's plain one.
type Customer struct {
	bun.BaseModel `bun:"table:customers"`

	ID   CustomerID `bun:",pk,nullzero,type:bigint,default:ulid_flake()"`
	Name string     `bun:",notnull"`
}

// Invoice refers to its customer by a CustomerID.
type Invoice struct {
	bun.BaseModel `bun:"table:invoices"`

	ID         ulidflake.ID `bun:",pk,nullzero,type:bigint,default:ulid_flake()"`
	CustomerID CustomerID   `bun:",notnull,type:bigint"`
	Customer   *Customer    `bun:"rel:belongs-to,join:customer_id=id"`
	Total      int          `bun:",notnull"`
}

// CreateTables creates the tables from the models: the ID columns become
// bigint DEFAULT ulid_flake() PRIMARY KEY.
func CreateTables(ctx context.Context, db *bun.DB) error {
	if _, err := db.NewCreateTable().Model((*Author)(nil)).Exec(ctx); err != nil {
		return err
	}
	if _, err := db.NewCreateTable().Model((*Post)(nil)).
		ForeignKey(`("author_id") REFERENCES "authors" ("id")`).Exec(ctx); err != nil {
		return err
	}
	if _, err := db.NewCreateTable().Model((*Customer)(nil)).Exec(ctx); err != nil {
		return err
	}
	_, err := db.NewCreateTable().Model((*Invoice)(nil)).
		ForeignKey(`("customer_id") REFERENCES "customers" ("id")`).Exec(ctx)
	return err
}

// CustomersAfter returns a page of at most limit customers whose keys are
// above after, in key order. The zero CustomerID gives the first page, in
// the same query: ulidflake.Bound writes it as 0, below every ID, where the
// CustomerID itself would refuse to be written (see Post.BeforeAppendModel
// for what bun makes of that).
func CustomersAfter(ctx context.Context, db bun.IDB, after CustomerID, limit int) ([]Customer, error) {
	var cs []Customer
	err := db.NewSelect().Model(&cs).Where("?TableAlias.id > ?", ulidflake.Bound(after.ID)).
		OrderExpr("?TableAlias.id").Limit(int64(limit)).Scan(ctx)
	return cs, err
}
