package sqltype

import "github.com/ulidflake/ulidflake/flake"

// The tests of this package exercise the ID the wrappers hold, under the
// names the root package gives it.
type ID = flake.ID

var (
	ErrZeroID = flake.ErrZeroID
	ErrNull   = flake.ErrNull
	ErrType   = flake.ErrType
)
