package sqltype_test

import (
	"errors"
	"fmt"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

func ExampleID_Value() {
	id := sqltype.ID(flake.MustParse("00EZJCRCB4650"))
	v, err := id.Value()
	fmt.Println(v, err)

	var unset sqltype.ID
	_, err = unset.Value()
	fmt.Println(errors.Is(err, sqltype.ErrZeroID))
	// Output:
	// 16873543940839584 <nil>
	// true
}

func ExampleID_Scan() {
	var id sqltype.ID
	err := id.Scan(int64(16873543940839584))
	fmt.Println(id, err)

	err = id.Scan(nil)
	fmt.Println(errors.Is(err, sqltype.ErrNull))
	// Output:
	// 00EZJCRCB4650 <nil>
	// true
}

func ExampleNullID() {
	var ref sqltype.NullID
	_ = ref.Scan(nil)
	v, _ := ref.Value()
	fmt.Println(ref.Valid, v)
	// Output: false <nil>
}

func ExampleTextID() {
	var t sqltype.TextID
	err := t.Scan("00ezjcrcb4650") // from a char(13) column
	v, _ := t.Value()
	fmt.Printf("%s %s %v\n", t, v, err)
	// Output: 00EZJCRCB4650 00EZJCRCB4650 <nil>
}

func ExampleID_GormDataType() {
	fmt.Println(sqltype.ID(0).GormDataType())
	// Output: bigint
}
