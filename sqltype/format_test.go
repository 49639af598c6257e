package sqltype

import (
	"fmt"
	"testing"

	"github.com/ulidflake/ulidflake/flake"
)

// ID, Bound, TextID, per-entity types and NullID print as flake.ID does;
// a NULL NullID prints NULL for every verb.
func TestFormat(t *testing.T) {
	type CustomerID struct{ ID }
	id := ID(flake.MustParse("00EZJCRCB4650"))
	for _, v := range []any{id, Bound(id), TextID{id}, CustomerID{id}, NullID{ID: id, Valid: true}} {
		for _, tc := range []struct{ format, want string }{
			{"%s", "00EZJCRCB4650"},
			{"%v", "00EZJCRCB4650"},
			{"%q", `"00EZJCRCB4650"`},
			{"%d", "16873543940839584"},
			{"%x", "3bf26618b218a0"},
			{"%X", "3BF26618B218A0"},
			{"%#x", "0x3bf26618b218a0"},
		} {
			if got := fmt.Sprintf(tc.format, v); got != tc.want {
				t.Errorf("Sprintf(%q, %T) = %q, want %q", tc.format, v, got, tc.want)
			}
		}
	}
	for _, tc := range []struct{ format, want string }{
		{"%s", "NULL"}, {"%v", "NULL"}, {"%+v", "NULL"}, {"%#v", "NULL"}, {"%q", "NULL"},
		{"%d", "NULL"}, {"%x", "NULL"}, {"%6s|", "  NULL|"},
		{"%020d", "                NULL"}, {"%-8x|", "NULL    |"}, {"%08s", "    NULL"}, {"%+.2d", "NULL"},
	} {
		if got := fmt.Sprintf(tc.format, NullID{ID: id}); got != tc.want {
			t.Errorf("Sprintf(%q, NULL) = %q, want %q", tc.format, got, tc.want)
		}
	}
	if s := (NullID{}).String() + " " + (NullID{ID: id, Valid: true}).String(); s != "NULL 00EZJCRCB4650" {
		t.Errorf("String: %q", s)
	}
	type row struct {
		A NullID
		B ID
	}
	if got := fmt.Sprintf("%v %+v", row{B: id}, row{A: NullID{ID: id, Valid: true}, B: id}); got != "{NULL 00EZJCRCB4650} {A:00EZJCRCB4650 B:00EZJCRCB4650}" {
		t.Errorf("structs: %q", got)
	}
}
