package sqltype_test

import (
	"errors"
	"fmt"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

func ExampleID_Value() {
	id := sqltype.ID(flake.MustParse("00EZJCRCB4650"))
	v, err := id.Value()
	fmt.Println(v, err)

	var unset sqltype.ID
	_, err = unset.Value()
	fmt.Println(errors.Is(err, ulidflake.ErrZeroID))
	// Output:
	// 16873543940839584 <nil>
	// true
}

func ExampleID_Scan() {
	var id sqltype.ID
	err := id.Scan(int64(16873543940839584))
	fmt.Println(id, err)

	err = id.Scan(nil)
	fmt.Println(errors.Is(err, flake.ErrNull))
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

func ExampleNullID_Format() {
	set := sqltype.NullID{ID: sqltype.ID(flake.MustParse("00EZJCRCB4650")), Valid: true}
	var null sqltype.NullID
	fmt.Printf("%v %v %x %x\n", set, null, set, null)
	// Output: 00EZJCRCB4650 NULL 3bf26618b218a0 NULL
}
