// Package protobufexample maps customers between PostgreSQL, Go and
// protobuf (customerpb, compiled by buf and protoc-gen-go from the Go
// module proxy: go generate).
//
// The mapping: in a message a service shows as JSON, an ID is a string
// field holding the 13 characters (ID.String, ulidflake.Parse), so that
// protojson (with JSON's field names, UseProtoNames) and the service's
// REST JSON agree; in a message that travels only in binary, a fixed64
// (8 bytes: uint64(id) one way, CreatedID's checks the other).
package protobufexample

//go:generate go run github.com/bufbuild/buf/cmd/buf@v1.75.0 generate

import (
	"errors"
	"fmt"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/protobuf/customerpb"
	"github.com/ulidflake/ulidflake/flake"
	"google.golang.org/protobuf/encoding/protojson"
)

// JSON is how the service writes messages as JSON: with the .proto's
// field names (referrer_id), as its REST JSON names them; protojson's
// default is lowerCamelCase (referrerId).
var JSON = protojson.MarshalOptions{UseProtoNames: true}

// errZero: the zero ID names no customer.
var errZero = errors.New("the zero ID names no customer")

// Customer is the service's own type, as its REST handlers encode it.
type Customer struct {
	ID       ulidflake.ID  `json:"id"`
	Name     string        `json:"name"`
	Referrer *ulidflake.ID `json:"referrer_id,omitempty"`
}

// ToProto returns c as a message.
func ToProto(c Customer) *customerpb.Customer {
	m := &customerpb.Customer{Id: c.ID.String(), Name: c.Name}
	if c.Referrer != nil {
		m.ReferrerId = c.Referrer.String()
	}
	return m
}

// FromProto returns the customer m holds; its IDs must parse (a missing
// or malformed one is an error that says which field).
func FromProto(m *customerpb.Customer) (Customer, error) {
	id, err := ulidflake.Parse(m.GetId())
	switch {
	case err != nil:
		return Customer{}, fmt.Errorf("customer.id: %w", err)
	case id.IsZero():
		return Customer{}, fmt.Errorf("customer.id: %w", errZero)
	}
	c := Customer{ID: id, Name: m.GetName()}
	if m.GetReferrerId() != "" {
		ref, err := ulidflake.Parse(m.GetReferrerId())
		switch {
		case err != nil:
			return Customer{}, fmt.Errorf("customer.referrer_id: %w", err)
		case ref.IsZero():
			return Customer{}, fmt.Errorf("customer.referrer_id: %w", errZero)
		}
		c.Referrer = &ref
	}
	return c, nil
}

// CreatedEvent returns the binary-only event of a new customer.
func CreatedEvent(id ulidflake.ID) *customerpb.CustomerCreated {
	return &customerpb.CustomerCreated{Id: uint64(id)}
}

// CreatedID returns the ID an event carries: a fixed64 above 2^63-1 is no
// ID (flake.ErrRange), and 0 names no customer.
func CreatedID(e *customerpb.CustomerCreated) (ulidflake.ID, error) {
	v := e.GetId()
	if v > uint64(flake.Max) {
		return 0, fmt.Errorf("customer_created.id %d: %w", v, flake.ErrRange)
	}
	if v == 0 {
		return 0, fmt.Errorf("customer_created.id: %w", errZero)
	}
	return ulidflake.ID(v), nil
}
