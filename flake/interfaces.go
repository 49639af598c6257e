package flake

import (
	"fmt"
	"io"
)

// MarshalGQL writes the ID as a GraphQL string, the 13-character text form
// (gqlgen's graphql.Marshaler: map a custom scalar to this type in
// gqlgen.yml; gqlgen does not fall back to MarshalText). A negative value,
// which no ID is, writes null.
func (id ID) MarshalGQL(w io.Writer) {
	b, err := id.AppendText(make([]byte, 1, EncodedLen+2))
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
// what to send.
func (id *ID) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("%w: GraphQL gave a %T: an ID is a string of 13 Crockford Base32 characters", ErrType, v)
	}
	return id.Bind(s)
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
