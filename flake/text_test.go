package flake

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseBoundaries(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ID
		err  error
	}{
		{"0000000000000", 0, nil},
		{"0000000000001", 1, nil},
		{"000000000000Z", 31, nil},
		{"7ZZZZZZZZZZZZ", Max, nil},
		{"7zzzzzzzzzzzz", Max, nil},
		{"00EZJCRCB4650", 16873543940839584, nil}, // the Python reference README
		{"00ezjcrcb4650", 16873543940839584, nil},
		{"8000000000000", 0, ErrRange},
		{"ZZZZZZZZZZZZZ", 0, ErrRange},
		{"", 0, ErrLength},
		{"000000000000", 0, ErrLength},
		{"00000000000000", 0, ErrLength},
		{"000000000000ß", 0, ErrLength}, // 14 bytes: length is counted in bytes
		{"00000000000ß", 0, ErrCharacter},
		{"000000000000I", 0, ErrCharacter},
		{"000000000000L", 0, ErrCharacter},
		{"000000000000O", 0, ErrCharacter},
		{"000000000000U", 0, ErrCharacter},
		{"000000000000u", 0, ErrCharacter},
		{"000000000000-", 0, ErrCharacter},
		{"000000000000 ", 0, ErrCharacter},
		{" 000000000000", 0, ErrCharacter},
		{"000000\x00000000", 0, ErrCharacter},
		{"8ZZZZZZZZZZZ!", 0, ErrCharacter}, // a bad character is reported before overflow
	} {
		got, err := Parse(tc.in)
		if !errors.Is(err, tc.err) || (err != nil) != (tc.err != nil) {
			t.Errorf("Parse(%q) error = %v, want %v", tc.in, err, tc.err)
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), quote(tc.in)) {
				t.Errorf("Parse(%q) error %q does not quote the input", tc.in, err)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("Parse(%q) = %d, want %d", tc.in, got, tc.want)
		}
		if s := got.String(); s != strings.ToUpper(tc.in) {
			t.Errorf("Parse(%q).String() = %q", tc.in, s)
		}
	}
}

func TestParseErrorMessages(t *testing.T) {
	for in, want := range map[string]string{
		"ABC":           `flake: wrong length: "ABC" is 3 bytes, want 13`,
		"000000000000U": `flake: invalid character: "000000000000U" has "U" at byte 12, not Crockford Base32 (0-9, A-Z without I, L, O, U)`,
		"8000000000000": `flake: value above 7ZZZZZZZZZZZZ: "8000000000000"`,
	} {
		if _, err := Parse(in); err == nil || err.Error() != want {
			t.Errorf("Parse(%q) error = %v, want %s", in, err, want)
		}
	}
	long := strings.Repeat("A", 1000)
	if _, err := Parse(long); err == nil || len(err.Error()) > 200 {
		t.Errorf("error for a 1000-byte input is not cut short: %v", err)
	}
}

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ID
		err  error
	}{
		{"0", 0, nil},
		{"1", 1, nil},
		{"9223372036854775807", Max, nil},
		{"9223372036854775808", 0, ErrRange},
		{"99999999999999999999", 0, ErrRange},
		{"-1", 0, ErrRange},
		{"-", 0, ErrCharacter},
		{"", 0, ErrLength},
		{"1.5", 0, ErrCharacter},
		{"+1", 0, ErrCharacter},
		{"1e3", 0, ErrCharacter},
		{" 1", 0, ErrCharacter},
	} {
		got, err := ParseInt(tc.in)
		if !errors.Is(err, tc.err) || (err != nil) != (tc.err != nil) {
			t.Errorf("ParseInt(%q) error = %v, want %v", tc.in, err, tc.err)
		} else if got != tc.want {
			t.Errorf("ParseInt(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestFromInt(t *testing.T) {
	for _, v := range []int64{0, 1, 1 << 62, int64(Max)} {
		if id, err := FromInt(v); err != nil || id.Int64() != v {
			t.Errorf("FromInt(%d) = %d, %v", v, id, err)
		}
	}
	for _, v := range []int64{-1, -1 << 63} {
		if _, err := FromInt(v); !errors.Is(err, ErrRange) {
			t.Errorf("FromInt(%d) error = %v, want ErrRange", v, err)
		}
	}
}

func TestNegativeIDCannotBeMarshalled(t *testing.T) {
	id := ID(-1)
	if _, err := id.MarshalText(); !errors.Is(err, ErrRange) {
		t.Errorf("MarshalText error = %v", err)
	}
	if _, err := id.MarshalBinary(); !errors.Is(err, ErrRange) {
		t.Errorf("MarshalBinary error = %v", err)
	}
	if _, err := id.MarshalJSON(); !errors.Is(err, ErrRange) {
		t.Errorf("MarshalJSON error = %v", err)
	}
	if _, err := Parse(id.String()); err == nil {
		t.Errorf("String of a negative value %q parses", id.String())
	}
}

func TestBinary(t *testing.T) {
	id := MustParse("00EZJCRCB4650")
	b, err := id.MarshalBinary()
	if err != nil || !bytes.Equal(b, []byte{0, 0x3b, 0xf2, 0x66, 0x18, 0xb2, 0x18, 0xa0}) {
		t.Fatalf("MarshalBinary = %x, %v", b, err)
	}
	var got ID
	for _, tc := range []struct {
		in  []byte
		err error
	}{
		{nil, ErrLength},
		{make([]byte, 7), ErrLength},
		{make([]byte, 16), ErrLength},
		{[]byte{0x80, 0, 0, 0, 0, 0, 0, 0}, ErrRange},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ErrRange},
	} {
		if err := got.UnmarshalBinary(tc.in); !errors.Is(err, tc.err) {
			t.Errorf("UnmarshalBinary(%x) error = %v, want %v", tc.in, err, tc.err)
		}
	}
}

func TestJSON(t *testing.T) {
	id := MustParse("00EZJCRCB4650")
	b, err := json.Marshal(struct{ ID ID }{id})
	if err != nil || string(b) != `{"ID":"00EZJCRCB4650"}` {
		t.Fatalf("json.Marshal = %s, %v", b, err)
	}
	for _, tc := range []struct {
		in   string
		want ID
		err  error
	}{
		{`"00EZJCRCB4650"`, id, nil},
		{`"00ezjcrcb4650"`, id, nil},
		{`"\u0030\u0030EZJCRCB4650"`, id, nil},
		{`16873543940839584`, 0, ErrJSON}, // above 2^53: JavaScript may have rounded it
		{`95720203633039700`, 0, ErrJSON}, // what JavaScript makes of 95720203633039693
		{`9223372036854775807`, 0, ErrJSON},
		{`9007199254740992`, 1 << 53, nil}, // 2^53, the largest exact one
		{`9007199254740993`, 0, ErrJSON},
		{`""`, 0, ErrLength}, // an empty form field
		{`0`, 0, nil},
		{`"1234567890123"`, MustParse("1234567890123"), nil}, // quoted digits are Base32
		{`"16873543940839584"`, 0, ErrLength},
		{`9223372036854775808`, 0, ErrRange},
		{`-1`, 0, ErrRange},
		{`1.5`, 0, ErrJSON},
		{`1e3`, 0, ErrJSON},
		{`true`, 0, ErrJSON},
		{`{}`, 0, ErrJSON},
		{`[]`, 0, ErrJSON},
		{`"0000000000000I"`, 0, ErrLength},
		{`"000000000000I"`, 0, ErrCharacter},
		{`"8000000000000"`, 0, ErrRange},
		{`"\x"`, 0, ErrJSON},
	} {
		var got ID
		err := got.UnmarshalJSON([]byte(tc.in))
		if !errors.Is(err, tc.err) || (err != nil) != (tc.err != nil) {
			t.Errorf("UnmarshalJSON(%s) error = %v, want %v", tc.in, err, tc.err)
		} else if got != tc.want {
			t.Errorf("UnmarshalJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// null leaves the value as it was, like encoding/json does.
	got := id
	if err := json.Unmarshal([]byte(`null`), &got); err != nil || got != id {
		t.Errorf("Unmarshal(null) = %s, %v", got, err)
	}
}

// randomIDs returns n IDs spread over every bit width, from a fixed seed.
func randomIDs(n int) []ID {
	r := rand.New(rand.NewPCG(1, 2))
	ids := make([]ID, n)
	for i := range ids {
		ids[i] = ID(r.Uint64() >> (1 + r.UintN(63)))
	}
	ids[0], ids[1], ids[2] = 0, 1, Max
	return ids
}

func TestRoundTripProperties(t *testing.T) {
	ids := randomIDs(100_000)
	for i, id := range ids {
		s := id.String()
		if len(s) != TextLen || s != strings.ToUpper(s) {
			t.Fatalf("String(%d) = %q", id, s)
		}
		if got, err := Parse(s); err != nil || got != id {
			t.Fatalf("Parse(String(%d)) = %d, %v", id, got, err)
		}
		if got, err := Parse(strings.ToLower(s)); err != nil || got != id {
			t.Fatalf("Parse(lower(%q)) = %d, %v", s, got, err)
		}
		var got ID
		b, _ := id.MarshalBinary()
		if err := got.UnmarshalBinary(b); err != nil || got != id {
			t.Fatalf("binary round trip of %d = %d, %v", id, got, err)
		}
		j, _ := id.MarshalJSON()
		if err := got.UnmarshalJSON(j); err != nil || got != id {
			t.Fatalf("JSON round trip of %d = %d, %v", id, got, err)
		}
		txt, _ := id.AppendText([]byte("x"))
		if string(txt) != "x"+s {
			t.Fatalf("AppendText = %q", txt)
		}
		if i > 0 {
			prev := ids[i-1]
			if textOrder, numOrder := strings.Compare(prev.String(), s), prev.Compare(id); textOrder != numOrder {
				t.Fatalf("text order %d != numeric order %d for %d, %d", textOrder, numOrder, prev, id)
			}
			pb, _ := prev.MarshalBinary()
			if bytes.Compare(pb, b) != prev.Compare(id) {
				t.Fatalf("binary order differs from numeric order for %d, %d", prev, id)
			}
		}
	}
}

func TestAccessors(t *testing.T) {
	// The Python README's stand-alone example: timestamp 16091865483. It
	// prints "Randomness: 4293", which is 137376>>5, the 15-bit field of the
	// scalable layout; the 20-bit field is 137376 (0x218a0, the low 20 bits
	// of its own hex 0x3bf26618b218a0).
	id := MustParse("00EZJCRCB4650")
	if id.Timestamp() != 16091865483 || id.Randomness() != 137376 {
		t.Errorf("Timestamp, Randomness = %d, %d", id.Timestamp(), id.Randomness())
	}
	// Scalable example from the Python README: SID 2.
	s := MustParse("00EZJCRCB4B32")
	if s.SID() != 2 || s.ScalableRandomness() != uint16(s.Randomness()>>5) {
		t.Errorf("SID, ScalableRandomness = %d, %d", s.SID(), s.ScalableRandomness())
	}
	if Max.Timestamp() != MaxTimestamp || Max.Randomness() != 1<<20-1 || Max.SID() != 31 || Max.ScalableRandomness() != 1<<15-1 {
		t.Errorf("Max fields wrong")
	}
	if !Zero.IsZero() || Max.IsZero() {
		t.Errorf("IsZero wrong")
	}
}
