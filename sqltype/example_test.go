package sqltype_test

import (
	"fmt"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

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

func ExampleNullID_Format() {
	set := sqltype.NullID{ID: flake.MustParse("00EZJCRCB4650"), Valid: true}
	var null sqltype.NullID
	fmt.Printf("%v %v %x %x\n", set, null, set, null)
	// Output: 00EZJCRCB4650 NULL 3bf26618b218a0 NULL
}
