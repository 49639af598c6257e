// Package sqltype provides the database/sql types that wrap a Ulid-Flake
// ID (ulidflake.ID, which is flake.ID): [NullID] for nullable bigint
// columns, [TextID] for IDs stored as 13-character text, and [Bound] for a
// query bound where the zero ID means "below every ID". The ID itself is a
// driver.Valuer and sql.Scanner for bigint columns.
//
// # Zero IDs are never written
//
// The zero ID means "unset". Writing it as a key is the classic silent bug:
// a model whose ID was never filled in lands as row 0, and the next one
// fails with a duplicate key, or worse, overwrites it. So ID.Value,
// [TextID.Value] and a valid [NullID] return flake.ErrZeroID for the zero
// ID, and the statement fails before it reaches the database.
//
// A driver cannot tell a value being stored from a value being compared, so
// this holds for every statement argument. Where the zero ID is meant, as
// the "from the start" cursor of keyset pagination (WHERE id > $1), pass
// [Bound](cursor): it writes the zero ID as 0, which sorts below every ID.
//
// Every type reads and writes zero, NULL and negative values as
// flake.ID's Scan and Value do: one rule for every scan and encode path of
// the module.
//
// This package imports only the standard library and this module's flake; most programs
// use its types through the root package github.com/ulidflake/ulidflake.
package sqltype
