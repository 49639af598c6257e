package flake

import (
	"errors"
	"strings"
	"testing"
)

// SplitPrefixed takes what ParsePrefixed takes, whatever the prefix, and
// refuses what checkPrefix refuses.
func TestSplitPrefixed(t *testing.T) {
	for _, tc := range []struct{ in, prefix, id string }{
		{"cus_00EZJCRCB4650", "cus", "00EZJCRCB4650"},
		{"a_b1_00ezjcrcb4650", "a_b1", "00ezjcrcb4650"},
		{strings.Repeat("a", MaxPrefixLen) + "_x", strings.Repeat("a", MaxPrefixLen), "x"},
		{"cus_", "cus", ""},
	} {
		prefix, id, err := SplitPrefixed(tc.in)
		if prefix != tc.prefix || id != tc.id || err != nil {
			t.Errorf("SplitPrefixed(%q) = %q, %q, %v; want %q, %q", tc.in, prefix, id, err, tc.prefix, tc.id)
		}
		if checkPrefix(prefix) != nil {
			t.Errorf("SplitPrefixed(%q) gave the prefix %q, which checkPrefix refuses", tc.in, prefix)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"00EZJCRCB4650", `flake: wrong prefix: "00EZJCRCB4650" has no prefix: want a prefix, an underscore and 13 characters`},
		{"Cus_00EZJCRCB4650", `flake: wrong prefix: "Cus_00EZJCRCB4650" has the prefix "Cus": ` + prefixRule},
		{"cus__00EZJCRCB4650", `flake: wrong prefix: "cus__00EZJCRCB4650" has the prefix "cus_": ` + prefixRule},
		{"_00EZJCRCB4650", `flake: wrong prefix: "_00EZJCRCB4650" has the prefix "": ` + prefixRule},
		{strings.Repeat("a", MaxPrefixLen+1) + "_x", ""},
		{"1a_x", ""},
		{"a-b_x", ""},
	} {
		prefix, id, err := SplitPrefixed(tc.in)
		if !errors.Is(err, ErrPrefix) || prefix != "" || id != "" || tc.want != "" && err.Error() != tc.want {
			t.Errorf("SplitPrefixed(%q) = %q, %q, %v; want ErrPrefix %s", tc.in, prefix, id, err, tc.want)
		}
	}
}
