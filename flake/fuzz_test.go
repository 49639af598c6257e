package flake

import (
	"bytes"
	"strings"
	"testing"
)

// Each target checks that an accepted input re-encodes to the canonical form
// and that the canonical form decodes back to the same ID.

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0000000000000", "7ZZZZZZZZZZZZ", "8000000000000", "00ezjcrcb4650", "000000000000U", "ß", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			return
		}
		canon := id.String()
		if canon != strings.ToUpper(s) {
			t.Fatalf("Parse(%q) = %s, which does not re-encode to the input", s, canon)
		}
		if back, err := Parse(canon); err != nil || back != id {
			t.Fatalf("Parse(%q) = %d, %v; want %d", canon, back, err, id)
		}
	})
}

func FuzzUnmarshalText(f *testing.F) {
	f.Add([]byte("00EZJCRCB4650"))
	f.Add([]byte("7zzzzzzzzzzzz"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var id ID
		if id.UnmarshalText(b) != nil {
			return
		}
		canon, err := id.MarshalText()
		if err != nil || !bytes.Equal(canon, bytes.ToUpper(b)) {
			t.Fatalf("UnmarshalText(%q) re-encodes to %q, %v", b, canon, err)
		}
		var back ID
		if err := back.UnmarshalText(canon); err != nil || back != id {
			t.Fatalf("UnmarshalText(%q) = %d, %v; want %d", canon, back, err, id)
		}
	})
}

func FuzzUnmarshalJSON(f *testing.F) {
	for _, s := range []string{`"00EZJCRCB4650"`, `16873543940839584`, `-1`, `null`, `"\u0030"`, `1.5`, `true`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var id ID
		if id.UnmarshalJSON(b) != nil || string(b) == "null" {
			return
		}
		canon, err := id.MarshalJSON()
		if err != nil || len(canon) != TextLen+2 {
			t.Fatalf("UnmarshalJSON(%q) = %d re-encodes to %q, %v", b, id, canon, err)
		}
		var back ID
		if err := back.UnmarshalJSON(canon); err != nil || back != id {
			t.Fatalf("UnmarshalJSON(%q) = %d, %v; want %d", canon, back, err, id)
		}
	})
}

func FuzzUnmarshalBinary(f *testing.F) {
	f.Add([]byte{0, 0x3b, 0xf2, 0x66, 0x18, 0xb2, 0x18, 0xa0})
	f.Add([]byte{0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var id ID
		if id.UnmarshalBinary(b) != nil {
			return
		}
		canon, err := id.MarshalBinary()
		if err != nil || !bytes.Equal(canon, b) {
			t.Fatalf("UnmarshalBinary(%x) re-encodes to %x, %v", b, canon, err)
		}
		if s := id.String(); MustParse(s) != id {
			t.Fatalf("text form %s of %d does not parse back", s, id)
		}
	})
}
