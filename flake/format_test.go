package flake

import (
	"fmt"
	"testing"
)

// Every verb prints what a reader expects: the text form for %s, %v and
// %q, the integer for %d, %x, %X, %o and %b, with width and flags.
func TestFormat(t *testing.T) {
	id := MustParse("00EZJCRCB4650") // 16873543940839584 = 0x3bf26618b218a0
	for _, tc := range []struct{ format, want string }{
		{"%s", "00EZJCRCB4650"},
		{"%v", "00EZJCRCB4650"},
		{"%+v", "00EZJCRCB4650"},
		{"%#v", `"00EZJCRCB4650"`},
		{"%q", `"00EZJCRCB4650"`},
		{"%#q", "`00EZJCRCB4650`"},
		{"%d", "16873543940839584"},
		{"%x", "3bf26618b218a0"},
		{"%X", "3BF26618B218A0"},
		{"%#x", "0x3bf26618b218a0"},
		{"%020x", "0000003bf26618b218a0"},
		{"%o", "737446303054414240"},
		{"%b", "111011111100100110011000011000101100100001100010100000"},
		{"%15s|", "  00EZJCRCB4650|"},
		{"%-15v|", "00EZJCRCB4650  |"},
		{"%.4s", "00EZ"},
		{"%20d", "   16873543940839584"},
		{"%t", "%!t(flake.ID=00EZJCRCB4650)"},
	} {
		if got := fmt.Sprintf(tc.format, id); got != tc.want {
			t.Errorf("Sprintf(%q) = %q, want %q", tc.format, got, tc.want)
		}
	}
	// Inside structs and slices, as loggers print them.
	type row struct{ ID ID }
	if got := fmt.Sprintf("%v %+v %x", row{id}, []ID{id, Max}, []ID{id}); got != "{00EZJCRCB4650} [00EZJCRCB4650 7ZZZZZZZZZZZZ] [3bf26618b218a0]" {
		t.Errorf("got %q", got)
	}
}
