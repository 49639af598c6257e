package flake

import (
	"fmt"
)

// alphabet is Crockford's Base32 alphabet.
const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// invalid marks a byte outside the alphabet in decodeTable.
const invalid = 0xFF

// decodeTable maps a byte to its 5-bit value, upper and lower case alike, or
// to invalid. I, L, O and U are not aliased: they are invalid.
var decodeTable = func() (t [256]byte) {
	for i := range t {
		t[i] = invalid
	}
	for i := 0; i < len(alphabet); i++ {
		c := alphabet[i]
		t[c] = byte(i)
		if c >= 'A' && c <= 'Z' {
			t[c+'a'-'A'] = byte(i)
		}
	}
	return t
}()

// Parse decodes the 13-character text form. It is case-insensitive and
// ASCII only. It returns [ErrLength] when s is not 13 bytes long,
// [ErrCharacter] for a byte outside the alphabet, and [ErrRange] when the
// value is above 7ZZZZZZZZZZZZ.
func Parse(s string) (ID, error) { return parse(s) }

// parse is Parse for strings and byte slices alike, so that UnmarshalText
// and UnmarshalJSON need not copy their input.
func parse[T string | []byte](s T) (ID, error) {
	if len(s) != TextLen {
		// The same message as ulid_flake_decode's (TestSQLMatchesGo).
		return 0, lengthError(string(s), TextLen)
	}
	var v uint64
	for i := 0; i < TextLen; i++ {
		d := decodeTable[s[i]]
		if d == invalid {
			return 0, characterError(string(s), i, "Crockford Base32 (0-9, A-Z without I, L, O, U)")
		}
		v = v<<5 | uint64(d)
	}
	// 13 characters carry 65 bits; the first must carry at most 3.
	if decodeTable[s[0]] > 7 {
		return 0, fmt.Errorf("%w: %s", errAboveMax, quote(string(s)))
	}
	return ID(v), nil
}

// MustParse is like [Parse] but panics on error. Use it for constants in
// tests and examples.
func MustParse(s string) ID {
	id, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return id
}

// ParseInt decodes the decimal integer form, "0" to "9223372036854775807",
// digits only. It returns [ErrLength] for an empty string, [ErrCharacter]
// for a byte that is not a digit (a sign included: "-1" is not an ID), and
// [ErrRange] above 2^63-1.
func ParseInt(s string) (ID, error) { return parseInt(s) }

func parseInt[T string | []byte](s T) (ID, error) {
	if len(s) == 0 {
		return 0, fmt.Errorf("%w: empty decimal ID", ErrLength)
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			if c == '-' && i == 0 && len(s) > 1 {
				return 0, fmt.Errorf("%w: %s is negative", errIntRange, quote(string(s)))
			}
			return 0, characterError(string(s), i, "a decimal digit")
		}
		if v > uint64(Max)/10 {
			return 0, fmt.Errorf("%w: %s is above 9223372036854775807", errIntRange, quote(string(s)))
		}
		v = v*10 + uint64(c-'0')
		if v > uint64(Max) {
			return 0, fmt.Errorf("%w: %s is above 9223372036854775807", errIntRange, quote(string(s)))
		}
	}
	return ID(v), nil
}

// String returns the 13-character upper-case text form. For a negative
// value, which is not a valid ID, it returns a string that Parse rejects.
func (id ID) String() string {
	var b [TextLen]byte
	id.encode(&b)
	return string(b[:])
}

// AppendText appends the text form to b. It returns [ErrRange] for a
// negative value. It allocates only when b has to grow.
func (id ID) AppendText(b []byte) ([]byte, error) {
	if id < 0 {
		return b, intRangeError(int64(id))
	}
	var buf [TextLen]byte
	id.encode(&buf)
	return append(b, buf[:]...), nil
}

// MarshalText implements [encoding.TextMarshaler].
func (id ID) MarshalText() ([]byte, error) {
	return id.AppendText(make([]byte, 0, TextLen))
}

// UnmarshalText implements [encoding.TextUnmarshaler] with the rules of
// [Parse].
func (id *ID) UnmarshalText(b []byte) error {
	v, err := parse(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// encode writes the text form into b, most significant 5 bits first.
func (id ID) encode(b *[TextLen]byte) {
	v := uint64(id)
	for i := TextLen - 1; i > 0; i-- {
		b[i] = alphabet[v&31]
		v >>= 5
	}
	b[0] = alphabet[v&31] // 4 bits left; 0-7 for a valid ID
}
