// Package idtype declares the example's prefixed ID type. Its marker,
// CustomerPrefix, is exported: gqlgen writes the alias out as the type it
// stands for, flake.Prefixed[idtype.CustomerPrefix], in the generated
// package, which can name only an exported marker.
package idtype

import "github.com/ulidflake/ulidflake"

// CustomerPrefix names CustomerID's prefix.
type CustomerPrefix struct{}

// Prefix returns "cus".
func (CustomerPrefix) Prefix() string { return "cus" }

// CustomerID is a customer's key: cus_00EZJCRCB4650 in GraphQL, a bigint
// in PostgreSQL.
type CustomerID = ulidflake.Prefixed[CustomerPrefix]
