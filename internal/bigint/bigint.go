// Package bigint is the one rule for an ID in a bigint column, on zero,
// NULL and negative values, which every scan and encode path of the
// module applies: flake.ID's Scan and Value, sqltype's types, pgxtype's
// codec. Package flake sets it when it is initialised (its errors are
// flake's), so that sqltype and pgxtype, which import flake, apply the
// same rule without flake exporting it.
package bigint

// Read reads a bigint column's value v (null: the column is NULL) as an
// ID:
//
//   - NULL: err is flake.ErrNull, since an ID cannot hold it; valid is
//     false, so a NullID reads it as not valid.
//   - a negative v: err is flake.ErrRange; no ID is negative.
//   - 0: the zero ID, unset; valid is false, so a NullID reads it as not
//     valid, and an ID holds it as flake.Zero.
//   - any other v: the ID v, valid.
var Read func(v int64, null bool) (id int64, valid bool, err error)

// Write returns the int64 that stores the ID id: flake.ErrZeroID for the
// zero ID, so that a key that was never filled is not stored as 0, and
// flake.ErrRange for a negative value.
var Write func(id int64) (int64, error)
