// Package idtype declares the example's prefixed ID types, which sqlc.yaml
// names in go_type (column overrides).
package idtype

import "github.com/ulidflake/ulidflake"

type customer struct{}

func (customer) Prefix() string { return "cus" }

// CustomerID is a customer's key: cus_00EZJCRCB4650 in text and JSON, a
// bigint in PostgreSQL.
type CustomerID = ulidflake.Prefixed[customer]

type invoice struct{}

func (invoice) Prefix() string { return "inv" }

// InvoiceID is an invoice's key in the converted schema (converted/):
// inv_00EZJCRCB4650.
type InvoiceID = ulidflake.Prefixed[invoice]
