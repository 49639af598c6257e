package flake_test

import (
	"errors"
	"fmt"

	"github.com/ulidflake/ulidflake/flake"
)

// A tool that reads prefixed IDs of any type splits off the prefix, then
// parses the ID.
func ExampleSplitPrefixed() {
	prefix, rest, err := flake.SplitPrefixed("cus_00EZJCRCB4650")
	fmt.Println(prefix, rest, err)
	id, err := flake.Parse(rest)
	fmt.Println(id.Int64(), err)

	_, _, err = flake.SplitPrefixed("Cus_00EZJCRCB4650")
	fmt.Println(errors.Is(err, flake.ErrPrefix))
	// Output:
	// cus 00EZJCRCB4650 <nil>
	// 16873543940839584 <nil>
	// true
}
