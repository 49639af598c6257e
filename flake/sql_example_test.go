package flake_test

import (
	"errors"
	"fmt"

	"github.com/ulidflake/ulidflake/flake"
)

// A driver's codec reads a bigint column: valid is false for NULL and for
// 0, the unset ID; an ID cannot hold NULL (ErrNull), and nothing holds a
// negative value (ErrIntRange).
func ExampleFromColumn() {
	for _, c := range []struct {
		v    int64
		null bool
	}{{16873543940839584, false}, {0, false}, {0, true}, {-5, false}} {
		id, valid, err := flake.FromColumn(c.v, c.null)
		fmt.Println(id, valid, err)
	}
	// Output:
	// 00EZJCRCB4650 true <nil>
	// 0000000000000 false <nil>
	// 0000000000000 false flake: NULL scanned into a non-null ID (use NullID)
	// 0000000000000 false flake: integer out of range: -5 is negative
}

// A driver's codec writes an ID to a bigint column: the zero ID, never
// set, is refused.
func ExampleID_ColumnValue() {
	v, err := flake.MustParse("00EZJCRCB4650").ColumnValue()
	fmt.Println(v, err)

	_, err = flake.Zero.ColumnValue()
	fmt.Println(errors.Is(err, flake.ErrZeroID))
	// Output:
	// 16873543940839584 <nil>
	// true
}
