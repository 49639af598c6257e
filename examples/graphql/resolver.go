// Package graphqlexample serves customers through a gqlgen GraphQL API
// whose scalar CustomerID is a prefixed ID, idtype.CustomerID
// (gqlgen.yml maps it): its MarshalGQL and UnmarshalGQL carry it as
// cus_ and the 13 characters, and it goes to PostgreSQL as bigint.
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

	"github.com/ulidflake/ulidflake/examples/graphql/idtype"
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
func (r *Resolver) CreateCustomer(ctx context.Context, name string, referrer *idtype.CustomerID) (*Customer, error) {
	if referrer != nil && referrer.IsZero() {
		return nil, errors.New("referrer: the zero ID names no customer")
	}
	c := &Customer{Name: name, Referrer: referrer}
	err := r.Pool.QueryRow(ctx, `INSERT INTO customers (name, referrer) VALUES ($1, $2) RETURNING id`, name, referrer).Scan(&c.ID)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign_key_violation
		return nil, errors.New("referrer: no such customer")
	}
	return c, err
}

// Customer returns one customer, or null.
func (r *Resolver) Customer(ctx context.Context, id idtype.CustomerID) (*Customer, error) {
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
// a client pages by passing the last ID it got, and nothing (null) for the
// first page, which the same typed argument carries to the query as NULL.
func (r *Resolver) Customers(ctx context.Context, after *idtype.CustomerID) ([]*Customer, error) {
	if after != nil && after.IsZero() { // below every ID: the first page too
		after = nil
	}
	rows, err := r.Pool.Query(ctx, `SELECT id, name, referrer FROM customers
		WHERE id > COALESCE($1::bigint, 0) ORDER BY id LIMIT 100`, after)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Customer, error) { return scanCustomer(row) })
}

// scanCustomer reads id, name and referrer (NULL: a nil pointer).
func scanCustomer(row pgx.Row) (*Customer, error) {
	var c Customer
	return &c, row.Scan(&c.ID, &c.Name, &c.Referrer)
}
