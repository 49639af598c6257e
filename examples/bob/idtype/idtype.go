// Package idtype declares the example's prefixed ID types, which the code
// Bob generates (../models, ../factory) uses for the key and reference
// columns that ../bobgen.yaml replaces. They are in a package of their own
// so that the generated packages can import them.
package idtype

import "github.com/ulidflake/ulidflake"

// CustomerPrefix names CustomerID's prefix; exported so that other packages
// (and generators) can name the type that CustomerID stands for.
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

// InvoiceID is an invoice's key: inv_00EZJCRCB4650.
type InvoiceID = ulidflake.Prefixed[InvoicePrefix]
