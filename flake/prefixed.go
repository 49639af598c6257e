package flake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrPrefix: a prefixed ID's text without its type's prefix, with another
// prefix, or a [Prefix] that returns an invalid prefix.
var ErrPrefix = errors.New("flake: wrong prefix")

// MaxPrefixLen is the longest prefix a [Prefix] may return.
const MaxPrefixLen = 63

// Prefix names the prefix of a [Prefixed] ID type: an empty struct type
// whose Prefix method returns 1 to [MaxPrefixLen] bytes of lower-case ASCII
// letters, digits and underscores, starting with a letter and not ending
// with an underscore, and always the same:
//
//	type CustomerPrefix struct{}
//
//	func (CustomerPrefix) Prefix() string { return "cus" }
//
// Export it: Go sees through the alias of [Prefixed], so code generated
// for CustomerID in another package (gqlgen's) names CustomerPrefix.
// (An empty struct, so that no pointer or interface type, whose zero value
// has no method to call, can name a prefix.)
type Prefix interface {
	~struct{}
	Prefix() string
}

// Prefixed is an ID whose text form carries the prefix that P names,
// cus_00EZJCRCB4650, while it is stored as the same bigint as [ID]: the
// prefix belongs to the Go type and is never stored. Declare one type per
// entity, as an alias:
//
//	type CustomerID = flake.Prefixed[CustomerPrefix]
//
// Its text, JSON, YAML, GraphQL, URL-parameter ([Prefixed.Bind]) and
// printed forms are the prefix, an underscore and the 13 characters, and
// parsing them refuses a missing or different prefix ([ErrPrefix]), so that
// an order's ID in text is never taken for a customer's. Everything else
// is ID's, promoted from the embedded field: Value and Scan (bigint; Value
// refuses the zero ID), the binary form (8 bytes, no prefix: gob and
// MarshalBinary carry no type), Int64, IsZero, Timestamp. The GORM plugin fills
// it as a key, and pgx and database/sql send it as a bigint.
//
// Keep the "=" of the alias: a defined type (type CustomerID
// flake.Prefixed[CustomerPrefix]) loses these methods and keeps only ID's, which
// write and read the 13 characters without the prefix.
//
// The zero Prefixed is the zero ID (unset). Make one from an ID with
// Prefixed[P]{ID: id}.
type Prefixed[P Prefix] struct{ ID }

// ParsePrefixed decodes the text form of a Prefixed[P]: P's prefix, an
// underscore, and 13 characters read as [Parse] reads them (case-insensitive).
// The prefix must match exactly. It returns [ErrPrefix] when the prefix is
// missing or another, and the error of Parse for the 13 characters.
func ParsePrefixed[P Prefix](s string) (Prefixed[P], error) {
	id, err := parsePrefixed[P](s)
	return Prefixed[P]{id}, err
}

func parsePrefixed[P Prefix, T string | []byte](s T) (ID, error) {
	var p P
	prefix := p.Prefix()
	if err := checkPrefix(prefix); err != nil {
		return 0, err
	}
	n := len(prefix)
	if len(s) <= n || string(s[:n]) != prefix || s[n] != '_' || lastUnderscore(string(s)) != n {
		return 0, prefixError(string(s), prefix)
	}
	id, err := parse(s[n+1:])
	if err != nil {
		return 0, fmt.Errorf("%w (the ID after %q in %s)", err, prefix+"_", quote(string(s)))
	}
	return id, nil
}

// prefixError says what prefix s has, if any, and which it needs.
func prefixError(s, want string) error {
	if i := lastUnderscore(s); i > 0 {
		return fmt.Errorf("%w: %s has the prefix %s, want %q", ErrPrefix, quote(s), quote(s[:i]), want)
	}
	return fmt.Errorf("%w: %s has no prefix, want %q followed by 13 characters", ErrPrefix, quote(s), want+"_")
}

func lastUnderscore(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '_' {
			return i
		}
	}
	return -1
}

// SplitPrefixed splits the text form of a prefixed ID at its last
// underscore, cus_00EZJCRCB4650 into "cus" and "00EZJCRCB4650", for code
// that reads a prefixed ID whose prefix it does not know in advance (where
// it does, [ParsePrefixed] checks it). It returns [ErrPrefix] when s has
// no underscore or what comes before the last one is not a prefix by the
// rules of [Prefix]. It does not read the ID after the underscore:
// [Parse] does.
func SplitPrefixed(s string) (prefix, id string, err error) {
	i := lastUnderscore(s)
	if i < 0 {
		return "", "", fmt.Errorf("%w: %s has no prefix: want a prefix, an underscore and 13 characters", ErrPrefix, quote(s))
	}
	if !validPrefix(s[:i]) {
		return "", "", fmt.Errorf("%w: %s has the prefix %s: %s", ErrPrefix, quote(s), quote(s[:i]), prefixRule)
	}
	return s[:i], s[i+1:], nil
}

// prefixRule is what makes a valid prefix, for error messages.
var prefixRule = fmt.Sprintf("a prefix is 1 to %d lower-case ASCII letters, digits and underscores, "+
	"starting with a letter and not ending with an underscore", MaxPrefixLen)

// validPrefix reports whether p is a valid prefix (see [Prefix]).
func validPrefix(p string) bool {
	ok := len(p) >= 1 && len(p) <= MaxPrefixLen && p[0] >= 'a' && p[0] <= 'z' && p[len(p)-1] != '_'
	for i := 0; ok && i < len(p); i++ {
		c := p[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	return ok
}

// checkPrefix returns [ErrPrefix] when p, what a [Prefix] method returns,
// is not a valid prefix.
func checkPrefix(p string) error {
	if !validPrefix(p) {
		return fmt.Errorf("%w: the Prefix method returns %s: %s", ErrPrefix, quote(p), prefixRule)
	}
	return nil
}

// AppendText appends the text form, prefix_00EZJCRCB4650, to b. It returns
// [ErrPrefix] for an invalid prefix and [ErrRange] for a negative ID.
func (p Prefixed[P]) AppendText(b []byte) ([]byte, error) {
	var pp P
	prefix := pp.Prefix()
	if err := checkPrefix(prefix); err != nil {
		return b, err
	}
	if p.ID < 0 {
		return b, intRangeError(int64(p.ID))
	}
	var buf [TextLen]byte
	p.ID.encode(&buf)
	b = append(b, prefix...)
	b = append(b, '_')
	return append(b, buf[:]...), nil
}

// String returns the text form, prefix_00EZJCRCB4650. For a negative ID
// it returns a string that ParsePrefixed rejects; for an invalid prefix,
// %!(BADPREFIX "Cus")00EZJCRCB4650.
func (p Prefixed[P]) String() string {
	var pp P
	prefix := pp.Prefix()
	if checkPrefix(prefix) != nil {
		return "%!(BADPREFIX " + quote(prefix) + ")" + p.ID.String()
	}
	var buf [MaxPrefixLen + 1 + TextLen]byte
	b := append(append(buf[:0], prefix...), '_')
	var text [TextLen]byte
	p.ID.encode(&text)
	return string(append(b, text[:]...))
}

// MarshalText implements [encoding.TextMarshaler].
func (p Prefixed[P]) MarshalText() ([]byte, error) {
	var pp P
	return p.AppendText(make([]byte, 0, len(pp.Prefix())+1+TextLen))
}

// UnmarshalText implements [encoding.TextUnmarshaler] with the rules of
// [ParsePrefixed].
func (p *Prefixed[P]) UnmarshalText(b []byte) error {
	id, err := parsePrefixed[P](b)
	if err != nil {
		return err
	}
	p.ID = id
	return nil
}

// MarshalJSON implements [json.Marshaler]: a JSON string holding the text
// form.
func (p Prefixed[P]) MarshalJSON() ([]byte, error) {
	var pp P
	b, err := p.AppendText(append(make([]byte, 0, len(pp.Prefix())+TextLen+3), '"'))
	if err != nil {
		return nil, err
	}
	return append(b, '"'), nil
}

// UnmarshalJSON implements [json.Unmarshaler]: a JSON string holding the
// text form, with the rules of [ParsePrefixed]. JSON null leaves p
// unchanged; anything else, numbers included, returns [ErrJSON].
func (p *Prefixed[P]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		var pp P
		return fmt.Errorf("%w: %s is not a JSON string holding %q and 13 characters", ErrJSON, jsonValue(b), pp.Prefix()+"_")
	}
	if bytes.IndexByte(b, '\\') < 0 {
		return p.UnmarshalText(b[1 : len(b)-1])
	}
	var s string // escaped characters: let encoding/json decode them
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%w: %s is not a valid JSON string", ErrJSON, quote(string(b)))
	}
	return p.Bind(s)
}

// MarshalGQL writes the text form as a GraphQL string (gqlgen's
// graphql.Marshaler). gqlgen's Marshaler cannot return an error: for an
// invalid prefix or a negative ID it writes null.
func (p Prefixed[P]) MarshalGQL(w io.Writer) {
	b, err := p.MarshalJSON()
	if err != nil {
		b = []byte("null")
	}
	_, _ = w.Write(b)
}

// UnmarshalGQL reads a GraphQL string holding the text form (gqlgen's
// graphql.Unmarshaler); any other value returns [ErrType] saying what it
// was and what to send.
func (p *Prefixed[P]) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		var pp P
		return gqlTypeError(v, fmt.Sprintf("a string, %q followed by 13 characters", pp.Prefix()+"_"))
	}
	return p.Bind(s)
}

// Bind sets p from its text form, with the rules of [ParsePrefixed]: what
// oapi-codegen's runtime calls for path, query and header parameters.
func (p *Prefixed[P]) Bind(s string) error {
	id, err := parsePrefixed[P](s)
	if err != nil {
		return err
	}
	p.ID = id
	return nil
}

// Format implements [fmt.Formatter] as [ID.Format] does, with the text
// verbs (%s %v %q) printing the prefixed text form ([Prefixed.String]).
// Any other verb prints %!verb(flake.Prefixed[...]=cus_00EZJCRCB4650).
func (p Prefixed[P]) Format(f fmt.State, verb rune) {
	switch verb {
	case 's', 'v', 'q':
		if verb == 'v' && f.Flag('#') {
			fmt.Fprintf(f, "%q", p.String())
			return
		}
		fmt.Fprintf(f, fmt.FormatString(f, verb), p.String())
	case 'd', 'x', 'X', 'o', 'O', 'b':
		p.ID.Format(f, verb)
	default:
		fmt.Fprintf(f, "%%!%c(%T=%s)", verb, p, p.String())
	}
}

// UnmarshalYAML reads a YAML string holding the text form, with the rules
// of [ParsePrefixed] (the Unmarshaler of gopkg.in/yaml.v2, which yaml.v3
// honours too; it needs no import). Without it, a YAML mapping
// ({id: 00EZJCRCB4650}) would set the embedded ID without its prefix.
func (p *Prefixed[P]) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		var pp P
		return fmt.Errorf("%w: YAML: want a string, %q and 13 characters: %v", ErrType, pp.Prefix()+"_", err)
	}
	return p.Bind(s)
}
