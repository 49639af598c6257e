// Package idtype declares the example's prefixed ID types.
package idtype

import "github.com/ulidflake/ulidflake"

// CustomerPrefix names CustomerID's prefix.
type CustomerPrefix struct{}

// Prefix returns "cus".
func (CustomerPrefix) Prefix() string { return "cus" }

// CustomerID is a customer's key: cus_00EZJCRCB4650 in text and JSON, a
// bigint in PostgreSQL.
type CustomerID = ulidflake.Prefixed[CustomerPrefix]
