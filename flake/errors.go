package flake

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Errors. Every error this package returns wraps exactly one of these, so
// callers test with errors.Is; the wrapping message says what was wrong and
// quotes the input.
var (
	// ErrLength: a text form that is not exactly 13 bytes, a binary form
	// that is not exactly 8 bytes, or an empty decimal.
	ErrLength = errors.New("flake: wrong length")
	// ErrCharacter: a byte outside the Crockford Base32 alphabet (I, L, O, U,
	// hyphens, spaces and non-ASCII included), or a non-digit in a decimal.
	ErrCharacter = errors.New("flake: invalid character")
	// ErrRange: a value that is not a valid ID: negative, or above
	// 2^63-1 (7ZZZZZZZZZZZZ), in any form (text, binary, decimal, JSON, an
	// integer). Its errors say which, as the SQL functions' do:
	// flake: value above 7ZZZZZZZZZZZZ: "8000000000000",
	// flake: integer out of range: -5 is negative.
	ErrRange = errors.New("flake: out of range")
	// ErrEpochRange: an epoch before 1970-01-01 or so late that IDs would
	// carry times past year 9999.
	ErrEpochRange = errors.New("flake: epoch out of range")
	// ErrTimeRange: a time before the epoch or more than 2^43-1 ms after it.
	ErrTimeRange = errors.New("flake: time out of range")
	// ErrMonotonicOverflow: the generator has used up the randomness of the
	// current millisecond. [Generator.New] returns it and leaves its state
	// unchanged; [Generator.NewWait] waits for the next millisecond instead.
	ErrMonotonicOverflow = errors.New("flake: monotonic overflow: the randomness of this millisecond is used up; retry in the next millisecond or call NewWait")
	// ErrClockBehind: the clock reads further behind a generator's last ID
	// than its max lead ([WithMaxLead]): it stepped back a long way, or an
	// earlier reading was far in the future. Waiting does not help; fix the
	// clock, then call [Generator.Reset] or make a new generator.
	ErrClockBehind = errors.New("flake: clock behind the generator's last ID")
	// ErrZeroID: a zero (unset) ID was passed as a statement argument
	// (ID.Value). It is refused so that it is never stored as a key. Where
	// zero is meant, as the first cursor of keyset pagination, pass a
	// ulidflake.Bound.
	ErrZeroID = errors.New("flake: zero ID as a statement argument: the ID was never set " +
		"(fill it; use NullID for a nullable column, or ulidflake.Bound(id) where zero is meant, as a pagination cursor)")
	// ErrNull: a NULL was scanned into an ID ([ID.Scan]); a nullable
	// column scans into a ulidflake.NullID.
	ErrNull = errors.New("flake: NULL scanned into a non-null ID (use NullID)")
	// ErrType: [ID.Scan] was given a value of a type no ID column holds,
	// or [ID.UnmarshalGQL] a GraphQL value that is not a string.
	ErrType = errors.New("flake: cannot scan into an ID")
	// ErrOption: an invalid option, of a generator or of any package of
	// this module (sidlease, blocks, migrations, gormplugin): every
	// bad-option error wraps it, and names the option and its value.
	ErrOption = errors.New("flake: invalid option")
	// ErrJSON: a JSON value that is neither a string nor a non-negative
	// integer.
	ErrJSON = errors.New("flake: invalid JSON ID")
)

// maxQuoted bounds how much of a bad input an error message repeats.
const maxQuoted = 64

// quote returns s quoted for an error message, cut at maxQuoted bytes.
func quote(s string) string {
	if len(s) > maxQuoted {
		return fmt.Sprintf("%q... (%d bytes)", s[:maxQuoted], len(s))
	}
	return fmt.Sprintf("%q", s)
}

func lengthError(s string, want int) error {
	if s == "" {
		return fmt.Errorf("%w: the ID is empty (\"\"), want %d characters", ErrLength, want)
	}
	return fmt.Errorf("%w: %s is %d bytes, want %d", ErrLength, quote(s), len(s), want)
}

// characterError reports the character (a whole UTF-8 sequence when there
// is one) at byte i of s.
func characterError(s string, i int, what string) error {
	_, size := utf8.DecodeRuneInString(s[i:])
	return fmt.Errorf("%w: %s has %q at byte %d, not %s", ErrCharacter, quote(s), s[i:i+size], i, what)
}

// rangeKind is an [ErrRange] with a message of its own, so that an
// error's text says which limit the value crossed and reads as the SQL
// functions' (TestSQLMatchesGo).
type rangeKind string

func (k rangeKind) Error() string { return string(k) }
func (k rangeKind) Unwrap() error { return ErrRange }

const (
	// errAboveMax: a text or binary form above 7ZZZZZZZZZZZZ.
	errAboveMax rangeKind = "flake: value above 7ZZZZZZZZZZZZ"
	// errIntRange: an integer, decimal or JSON number that is negative or
	// above 2^63-1.
	errIntRange rangeKind = "flake: integer out of range"
)

func intRangeError(v int64) error {
	return fmt.Errorf("%w: %d is negative", errIntRange, v)
}
