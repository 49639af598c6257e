package flake_test

import (
	"errors"
	"fmt"

	"github.com/ulidflake/ulidflake/flake"
)

// A driver hands Scan a bigint column's value: 0 reads as the unset ID;
// an ID cannot hold NULL (ErrNull), and nothing holds a negative value
// (ErrRange). A nullable column scans into a ulidflake.NullID.
func ExampleID_Scan() {
	for _, v := range []any{int64(16873543940839584), int64(0), nil, int64(-5)} {
		var id flake.ID
		err := id.Scan(v)
		fmt.Println(id, err)
	}
	// Output:
	// 00EZJCRCB4650 <nil>
	// 0000000000000 <nil>
	// 0000000000000 flake: NULL scanned into a non-null ID (use NullID)
	// 0000000000000 flake: integer out of range: -5 is negative
}

// Value writes an ID to a bigint column: the zero ID, never set, is
// refused.
func ExampleID_Value() {
	v, err := flake.MustParse("00EZJCRCB4650").Value()
	fmt.Println(v, err)

	_, err = flake.Zero.Value()
	fmt.Println(errors.Is(err, flake.ErrZeroID))
	// Output:
	// 16873543940839584 <nil>
	// true
}

// GormDataType makes GORM declare an ID field as a plain bigint column.
func ExampleID_GormDataType() {
	fmt.Println(flake.Zero.GormDataType())
	// Output: bigint
}
