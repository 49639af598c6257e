package flake

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// AppendBinary appends the 8-byte big-endian form to b. It returns
// [ErrIntRange] for a negative value.
func (id ID) AppendBinary(b []byte) ([]byte, error) {
	if id < 0 {
		return b, intRangeError(int64(id))
	}
	return binary.BigEndian.AppendUint64(b, uint64(id)), nil
}

// MarshalBinary implements [encoding.BinaryMarshaler]: 8 bytes, big-endian.
func (id ID) MarshalBinary() ([]byte, error) {
	return id.AppendBinary(make([]byte, 0, BinaryLen))
}

// UnmarshalBinary implements [encoding.BinaryUnmarshaler]. It returns
// [ErrLength] unless b is 8 bytes long and [ErrOverflow] when the sign bit is
// set.
func (id *ID) UnmarshalBinary(b []byte) error {
	if len(b) != BinaryLen {
		return fmt.Errorf("%w: binary ID is %d bytes, want %d", ErrLength, len(b), BinaryLen)
	}
	v := binary.BigEndian.Uint64(b)
	if v > uint64(Max) {
		return fmt.Errorf("%w: binary ID %#016x has the sign bit set", ErrOverflow, v)
	}
	*id = ID(v)
	return nil
}

// MarshalJSON implements [json.Marshaler]: a JSON string holding the text
// form. A number would lose precision in JavaScript: nearly every ID is
// above 2^53.
func (id ID) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, EncodedLen+2)
	b = append(b, '"')
	b, err := id.AppendText(b)
	if err != nil {
		return nil, err
	}
	return append(b, '"'), nil
}

// MaxJSONNumber is the largest bare JSON number UnmarshalJSON accepts:
// 2^53, the largest integer JavaScript (and any IEEE double) holds exactly.
// Every ID made after 2024-01-01 plus about 8.6 ms is above it, so IDs
// travel as strings.
const MaxJSONNumber ID = 1 << 53

// UnmarshalJSON implements [json.Unmarshaler]. It accepts a JSON string
// holding the text form (a quoted all-digit string is Base32, never decimal)
// and, for interoperability, a bare non-negative JSON integer up to
// [MaxJSONNumber]: a larger number has already lost precision if it passed
// through JavaScript, and could decode, silently, to another valid ID.
// JSON null leaves id unchanged, as encoding/json does for other types. The
// empty string "" (what an HTML form sends for an empty field) returns
// [ErrLength] saying the ID is empty. Anything else returns [ErrJSON]; a bad
// string or integer returns the error of [Parse] or [ParseInt].
func (id *ID) UnmarshalJSON(b []byte) error {
	var v ID
	var err error
	switch {
	case len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"':
		s := b[1 : len(b)-1]
		if bytes.IndexByte(s, '\\') >= 0 { // escaped characters: let encoding/json decode them
			var str string
			if json.Unmarshal(b, &str) != nil {
				return fmt.Errorf("%w: %s is not a valid JSON string", ErrJSON, quote(string(b)))
			}
			v, err = Parse(str)
		} else {
			v, err = parse(s)
		}
	case string(b) == "null":
		return nil
	case len(b) > 0 && (b[0] >= '0' && b[0] <= '9' || b[0] == '-'):
		v, err = parseInt(b)
		if err != nil && !errors.Is(err, ErrIntRange) {
			err = fmt.Errorf("%w: %s is not a non-negative integer", ErrJSON, quote(string(b)))
		} else if err == nil && v > MaxJSONNumber {
			err = fmt.Errorf("%w: the number %s is above 2^53: a JSON number that large has lost precision "+
				"in JavaScript before it arrives (it may now name another ID); send the 13-character string",
				ErrJSON, quote(string(b)))
		}
	default:
		err = fmt.Errorf("%w: %s is neither a string nor a non-negative integer", ErrJSON, quote(string(b)))
	}
	if err != nil {
		return err
	}
	*id = v
	return nil
}
