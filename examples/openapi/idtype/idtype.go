// Package idtype declares the example's prefixed ID type, which
// openapi.yaml names (x-go-type) for the generated code. Its marker,
// CustomerPrefix, is exported, as docs/go.md declares markers.
package idtype

import "github.com/ulidflake/ulidflake"

// CustomerPrefix names CustomerID's prefix.
type CustomerPrefix struct{}

// Prefix returns "cus".
func (CustomerPrefix) Prefix() string { return "cus" }

// CustomerID is a customer's key: cus_00EZJCRCB4650 in paths, queries
// and JSON, a bigint in PostgreSQL.
type CustomerID = ulidflake.Prefixed[CustomerPrefix]
