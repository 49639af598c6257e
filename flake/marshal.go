package flake

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// AppendBinary appends the 8-byte big-endian form to b. It returns
// [ErrRange] for a negative value.
func (id ID) AppendBinary(b []byte) ([]byte, error) {
	if id < 0 {
		return b, intRangeError(int64(id))
	}
	return binary.BigEndian.AppendUint64(b, uint64(id)), nil
}

// MarshalBinary implements [encoding.BinaryMarshaler]: 8 bytes, big-endian.
func (id ID) MarshalBinary() ([]byte, error) {
	return id.AppendBinary(make([]byte, 0, binaryLen))
}

// UnmarshalBinary implements [encoding.BinaryUnmarshaler]. It returns
// [ErrLength] unless b is 8 bytes long and [ErrRange] when the sign bit is
// set.
func (id *ID) UnmarshalBinary(b []byte) error {
	if len(b) != binaryLen {
		return fmt.Errorf("%w: binary ID is %d bytes, want %d", ErrLength, len(b), binaryLen)
	}
	v := binary.BigEndian.Uint64(b)
	if v > uint64(Max) {
		return fmt.Errorf("%w: binary ID %#016x has the sign bit set", errAboveMax, v)
	}
	*id = ID(v)
	return nil
}

// MarshalJSON implements [json.Marshaler]: a JSON string holding the text
// form. A number would lose precision in JavaScript: nearly every ID is
// above 2^53.
func (id ID) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, TextLen+2)
	b = append(b, '"')
	b, err := id.AppendText(b)
	if err != nil {
		return nil, err
	}
	return append(b, '"'), nil
}

// MaxJSONNumber is the largest bare JSON number UnmarshalJSON accepts:
// 2^53, the largest integer JavaScript (and any IEEE double) holds exactly.
// Every ID made under the default epoch after 2024-04-09T10:05:34.592Z
// (2^33 ms after the epoch) is above it, so IDs travel as strings;
// [TrustedID] decodes exact integers from writers that keep them exact.
const MaxJSONNumber ID = 1 << 53

// UnmarshalJSON implements [json.Unmarshaler]. It accepts a JSON string
// holding the text form (a quoted all-digit string is Base32, never
// decimal: one of 13 digits decodes as Base32, any other length returns
// [ErrLength] saying that decimal strings are refused and giving the
// 13-character form to send instead)
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
			if len(str) != TextLen && allDigits([]byte(str)) {
				err = decimalStringError([]byte(str))
			} else {
				v, err = Parse(str)
			}
		} else if len(s) != TextLen && allDigits(s) {
			err = decimalStringError(s)
		} else {
			v, err = parse(s)
		}
	case string(b) == "null":
		return nil
	case len(b) > 0 && (b[0] >= '0' && b[0] <= '9' || b[0] == '-'):
		v, err = parseJSONInt(b, "a non-negative integer")
		if err == nil && v > MaxJSONNumber {
			err = fmt.Errorf("%w: the number %s is above 2^53: a JSON number that large has lost precision "+
				"in JavaScript before it arrives (it may now name another ID); send the 13-character string "+
				"(or, for JSON written with exact integers, as PostgreSQL writes it, decode into flake.TrustedID)",
				ErrJSON, jsonValue(b))
		}
	default:
		err = fmt.Errorf("%w: %s is neither a string nor a non-negative integer", ErrJSON, jsonValue(b))
	}
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// allDigits reports whether s is all ASCII digits.
func allDigits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(s) > 0
}

// decimalStringError reports a quoted decimal integer, as JavaScript's
// BigInt.toString() and protojson write 64-bit integers.
func decimalStringError(s []byte) error {
	send := "its 13-character Base32 form"
	if id, err := parseInt(s); err == nil {
		send = fmt.Sprintf("%q, its 13-character Base32 form", id.String())
	}
	return fmt.Errorf("%w: the JSON string %s is a decimal integer: a JSON string holds the 13-character "+
		"Base32 form, and a quoted all-digit string is read as Base32, never as decimal; send %s",
		ErrLength, quote(string(s)), send)
}

// TrustedID is an ID for decoding JSON from a trusted writer that writes
// exact integers, such as PostgreSQL's row_to_json, to_json and json_agg,
// which write a bigint as a bare number of up to 19 digits. Its
// UnmarshalJSON accepts any non-negative JSON integer up to 2^63-1, exactly;
// everything else it decodes as [ID.UnmarshalJSON] does. It encodes as ID
// does, as the 13-character string.
//
// Never use it for JSON that may have passed through JavaScript or any
// other reader that holds numbers as doubles: above 2^53 such a number has
// been rounded, possibly to another valid ID, which TrustedID cannot see.
//
//	var rows []struct {
//		ID    flake.TrustedID `json:"id"`
//		Total int             `json:"total"`
//	}
//	err := json.Unmarshal(aggJSON, &rows) // SELECT json_agg(o) FROM orders o
//	id := rows[0].ID.ID
type TrustedID struct{ ID }

// UnmarshalJSON implements [json.Unmarshaler]: a bare integer decodes
// exactly ([ErrRange] when negative or above 2^63-1, [ErrJSON] for a
// fraction or an exponent); anything else as by [ID.UnmarshalJSON].
func (t *TrustedID) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || (b[0] < '0' || b[0] > '9') && b[0] != '-' {
		return t.ID.UnmarshalJSON(b)
	}
	v, err := parseJSONInt(b, "an integer")
	if err != nil {
		return err
	}
	t.ID = v
	return nil
}

// parseJSONInt decodes b, a bare JSON number, as an integer. It returns
// [ErrRange] when b is negative or above 2^63-1 and [ErrJSON], saying
// that b is not want, for a fraction, an exponent or invalid JSON.
func parseJSONInt(b []byte, want string) (ID, error) {
	v, err := parseInt(b)
	switch {
	case err == nil:
		return v, nil
	case !json.Valid(b):
		return 0, fmt.Errorf("%w: %s is not valid JSON", ErrJSON, quote(string(b)))
	case !errors.Is(err, ErrRange):
		return 0, fmt.Errorf("%w: the number %s is not %s", ErrJSON, jsonValue(b), want)
	case b[0] == '-':
		return 0, fmt.Errorf("%w: the number %s is negative", errIntRange, jsonValue(b))
	}
	return 0, fmt.Errorf("%w: the number %s is above 9223372036854775807", errIntRange, jsonValue(b))
}

// jsonValue returns a JSON value for an error message as JSON writes it,
// so that a number or true is never quoted as if it were a string, cut at
// maxQuoted bytes as [quote] cuts. What is not valid JSON it quotes.
func jsonValue(b []byte) string {
	var c bytes.Buffer
	if json.Compact(&c, b) != nil {
		return quote(string(b))
	}
	s := c.String()
	if len(s) <= maxQuoted {
		return s
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:n], len(s))
}
