package flake

import (
	"encoding/json"
	"fmt"
	"io"
)

// MarshalGQL writes the ID as a GraphQL string, the 13-character text form
// (gqlgen's graphql.Marshaler: map a custom scalar to this type in
// gqlgen.yml; gqlgen does not fall back to MarshalText). A negative value,
// which no ID is, writes null.
func (id ID) MarshalGQL(w io.Writer) {
	b, err := id.AppendText(make([]byte, 1, TextLen+2))
	if err != nil {
		_, _ = io.WriteString(w, "null")
		return
	}
	b[0] = '"'
	_, _ = w.Write(append(b, '"'))
}

// UnmarshalGQL reads a GraphQL input value (gqlgen's
// graphql.Unmarshaler): a string holding the text form, with the rules of
// [Parse]. Any other value (a number: GraphQL's Int is 32 bits, and a
// larger number loses precision in JavaScript) returns [ErrType] saying
// what it was and what to send.
func (id *ID) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		return gqlTypeError(v, "a string of 13 Crockford Base32 characters")
	}
	return id.Bind(s)
}

// gqlTypeError reports a GraphQL input value v that is not a string, and
// what to send instead.
func gqlTypeError(v any, want string) error {
	return fmt.Errorf("%w: GraphQL gave %s, not a string: send the ID as %s", ErrType, gqlValue(v), want)
}

// gqlValue names a GraphQL input value for an error message: a number as
// a number (gqlgen gives an int64 for a literal, a json.Number for a
// variable), never quoted as if it were a string.
func gqlValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("the boolean %t", v)
	case json.Number, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		n := fmt.Sprint(v)
		if len(n) > maxQuoted {
			n = fmt.Sprintf("%s... (%d characters)", n[:maxQuoted], len(n))
		}
		return "the number " + n
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a value of Go type %T", v)
}

// Bind sets the ID from its text form, with the rules of [Parse]: what
// oapi-codegen's runtime calls for path, query and header parameters
// (its Binder interface; otherwise it parses an int64 kind as a decimal
// number).
func (id *ID) Bind(s string) error {
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*id = v
	return nil
}
