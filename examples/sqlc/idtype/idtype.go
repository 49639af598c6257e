// Package idtype declares the example's prefixed ID types, which sqlc.yaml
// names in go_type (column overrides).
package idtype

import "github.com/ulidflake/ulidflake"

// CustomerPrefix names CustomerID's prefix.
type CustomerPrefix struct{}

// Prefix returns "cus".
func (CustomerPrefix) Prefix() string { return "cus" }

// CustomerID is a customer's key: cus_00EZJCRCB4650 in text and JSON, a
// bigint in PostgreSQL.
type CustomerID = ulidflake.Prefixed[CustomerPrefix]

// InvoicePrefix names InvoiceID's prefix.
type InvoicePrefix struct{}

// Prefix returns "inv".
func (InvoicePrefix) Prefix() string { return "inv" }

// InvoiceID is an invoice's key in the converted schema (converted/):
// inv_00EZJCRCB4650.
type InvoiceID = ulidflake.Prefixed[InvoicePrefix]
