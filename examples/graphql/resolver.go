// Package graphqlexample serves customers through a gqlgen GraphQL API
// whose scalar FlakeID is ulidflake's ID (gqlgen.yml maps it to
// flake.ID, the type behind ulidflake.ID): the ID's MarshalGQL and
// UnmarshalGQL carry it as the 13-character string, and it goes to
// PostgreSQL as bigint.
package graphqlexample

//go:generate go run github.com/99designs/gqlgen generate

import (
	"context"
	"errors"
	"net/http"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake"
)

// Schema is the table the resolvers use. Its key defaults to
// ulid_flake(): the migrations must be installed.
const Schema = `CREATE TABLE IF NOT EXISTS customers (
	id       bigint PRIMARY KEY DEFAULT ulid_flake(),
	name     text NOT NULL,
	referrer bigint REFERENCES customers)`

// Resolver implements the generated ResolverRoot on a pgx pool (with
// pgxtype.AfterConnect registered).
type Resolver struct{ Pool *pgxpool.Pool }

// NewHandler returns the GraphQL endpoint (POST).
func NewHandler(r *Resolver) http.Handler {
	h := handler.New(NewExecutableSchema(Config{Resolvers: r}))
	h.AddTransport(transport.POST{})
	return h
}

func (r *Resolver) Mutation() MutationResolver { return r }
func (r *Resolver) Query() QueryResolver       { return r }

// CreateCustomer inserts a customer; the database makes its ID.
func (r *Resolver) CreateCustomer(ctx context.Context, name string, referrer *ulidflake.ID) (*Customer, error) {
	c := &Customer{Name: name, Referrer: referrer}
	ref := ulidflake.NullID{}
	if referrer != nil {
		if referrer.IsZero() {
			return nil, errors.New("referrer: the zero ID names no customer")
		}
		ref = ulidflake.NullID{ID: *referrer, Valid: true}
	}
	err := r.Pool.QueryRow(ctx, `INSERT INTO customers (name, referrer) VALUES ($1, $2) RETURNING id`, name, ref).Scan(&c.ID)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign_key_violation
		return nil, errors.New("referrer: no such customer")
	}
	return c, err
}

// Customer returns one customer, or null.
func (r *Resolver) Customer(ctx context.Context, id ulidflake.ID) (*Customer, error) {
	if id.IsZero() { // parses, but names no row (and is no statement argument)
		return nil, nil
	}
	c, err := scanCustomer(r.Pool.QueryRow(ctx, `SELECT id, name, referrer FROM customers WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return c, err
}

// Customers returns up to 100 customers in ID order, after the given ID:
// a client pages by passing the last ID it got.
func (r *Resolver) Customers(ctx context.Context, after *ulidflake.ID) ([]*Customer, error) {
	var bound ulidflake.Bound // zero: from the first
	if after != nil {
		bound = ulidflake.Bound(*after)
	}
	rows, err := r.Pool.Query(ctx, `SELECT id, name, referrer FROM customers WHERE id > $1 ORDER BY id LIMIT 100`, bound)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	page := []*Customer{}
	for rows.Next() {
		c, err := scanCustomer(rows)
		if err != nil {
			return nil, err
		}
		page = append(page, c)
	}
	return page, rows.Err()
}

func scanCustomer(row pgx.Row) (*Customer, error) {
	var c Customer
	var ref ulidflake.NullID
	if err := row.Scan(&c.ID, &c.Name, &ref); err != nil {
		return nil, err
	}
	if ref.Valid {
		c.Referrer = &ref.ID
	}
	return &c, nil
}
