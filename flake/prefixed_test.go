package flake

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

type customer struct{}

func (customer) Prefix() string { return "cus" }

type order struct{}

func (order) Prefix() string { return "ord" }

type badPrefix struct{}

func (badPrefix) Prefix() string { return "Cus" }

type customerID = Prefixed[customer]

func TestPrefixedRoundTrips(t *testing.T) {
	id := customerID{MustParse("00EZJCRCB4650")}
	const text = "cus_00EZJCRCB4650"
	if got := id.String(); got != text {
		t.Fatalf("String = %q, want %q", got, text)
	}
	b, err := id.MarshalText()
	if err != nil || string(b) != text {
		t.Fatalf("MarshalText = %q, %v", b, err)
	}
	j, err := json.Marshal(struct{ ID customerID }{id})
	if err != nil || string(j) != `{"ID":"cus_00EZJCRCB4650"}` {
		t.Fatalf("json.Marshal = %s, %v", j, err)
	}
	var back struct{ ID customerID }
	if err := json.Unmarshal(j, &back); err != nil || back.ID != id {
		t.Fatalf("json.Unmarshal = %v, %v", back.ID, err)
	}
	for _, s := range []string{text, "cus_00ezjcrcb4650"} {
		got, err := ParsePrefixed[customer](s)
		if err != nil || got != id {
			t.Fatalf("ParsePrefixed(%q) = %v, %v", s, got, err)
		}
		var bound customerID
		if err := bound.Bind(s); err != nil || bound != id {
			t.Fatalf("Bind(%q) = %v, %v", s, bound, err)
		}
		var gql customerID
		if err := gql.UnmarshalGQL(s); err != nil || gql != id {
			t.Fatalf("UnmarshalGQL(%q) = %v, %v", s, gql, err)
		}
	}
	var esc customerID
	if err := json.Unmarshal([]byte(`"cus\u005f00EZJCRCB4650"`), &esc); err != nil || esc != id {
		t.Fatalf("escaped JSON = %v, %v", esc, err)
	}
	var w strings.Builder
	id.MarshalGQL(&w)
	if w.String() != `"cus_00EZJCRCB4650"` {
		t.Fatalf("MarshalGQL = %s", w.String())
	}
}

func TestPrefixedStoresTheBigint(t *testing.T) {
	id := customerID{MustParse("00EZJCRCB4650")}
	v, err := id.Value()
	if err != nil || v != driver.Value(id.Int64()) {
		t.Fatalf("Value = %v, %v", v, err)
	}
	var back customerID
	if err := back.Scan(id.Int64()); err != nil || back != id {
		t.Fatalf("Scan = %v, %v", back, err)
	}
	if _, err := (customerID{}).Value(); !errors.Is(err, ErrZeroID) {
		t.Fatalf("zero Value: %v, want ErrZeroID", err)
	}
	b, err := id.MarshalBinary()
	if err != nil || len(b) != binaryLen {
		t.Fatalf("MarshalBinary = %x, %v", b, err)
	}
	if id.GormDataType() != "bigint" {
		t.Fatalf("GormDataType = %q", id.GormDataType())
	}
}

func TestPrefixedFormat(t *testing.T) {
	id := customerID{MustParse("00EZJCRCB4650")}
	for format, want := range map[string]string{
		"%s":   "cus_00EZJCRCB4650",
		"%v":   "cus_00EZJCRCB4650",
		"%q":   `"cus_00EZJCRCB4650"`,
		"%#v":  `"cus_00EZJCRCB4650"`,
		"%20s": "   cus_00EZJCRCB4650",
		"%d":   "16873543940839584",
		"%x":   "3bf26618b218a0",
		"%v!":  "cus_00EZJCRCB4650!",
		"%c":   "%!c(flake.Prefixed[github.com/ulidflake/ulidflake/flake.customer]=cus_00EZJCRCB4650)",
	} {
		if got := fmt.Sprintf(format, id); got != want {
			t.Errorf("Sprintf(%q) = %q, want %q", format, got, want)
		}
	}
	if got := fmt.Sprint([]customerID{id}); got != "[cus_00EZJCRCB4650]" {
		t.Errorf("Sprint(slice) = %q", got)
	}
}

func TestPrefixedErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want error
		msg  string
	}{
		{"00EZJCRCB4650", ErrPrefix, `"00EZJCRCB4650" has no prefix, want "cus_" followed by 13 characters`},
		{"ord_00EZJCRCB4650", ErrPrefix, `"ord_00EZJCRCB4650" has the prefix "ord", want "cus"`},
		{"CUS_00EZJCRCB4650", ErrPrefix, `has the prefix "CUS", want "cus"`},
		{"cus00EZJCRCB4650", ErrPrefix, `has no prefix`},
		{"cus_", ErrLength, `the ID is empty`},
		{"cus_cus_00EZJCRCB4650", ErrPrefix, `has the prefix "cus_cus", want "cus"`},
		{"cus_x_00EZJCRCB4650", ErrPrefix, `has the prefix "cus_x", want "cus"`},
		{"cus__00EZJCRCB4650", ErrPrefix, `has the prefix "cus_", want "cus"`},
		{"cus_00EZJCRCB465", ErrLength, `after "cus_" in "cus_00EZJCRCB465"`},
		{strings.Repeat("x", 1<<20) + "_00EZJCRCB4650", ErrPrefix, `... (1048576 bytes), want "cus"`},
		{"cus_00EZJCRCB465U", ErrCharacter, `"00EZJCRCB465U" has "U" at byte 12`},
		{"cus_80000000000000", ErrLength, ``},
		{"cus_8000000000000", ErrRange, ``},
		{"", ErrPrefix, `has no prefix`},
	} {
		_, err := ParsePrefixed[customer](tc.in)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParsePrefixed(%q) = %v, want %v containing %q", tc.in, err, tc.want, tc.msg)
		}
		var j customerID
		if err := j.UnmarshalJSON([]byte(`"` + tc.in + `"`)); !errors.Is(err, tc.want) {
			t.Errorf("UnmarshalJSON(%q) = %v, want %v", tc.in, err, tc.want)
		}
	}
	for _, in := range []string{`16873543940839584`, `true`, `"cus_00EZJCRCB4650`, `{}`} {
		var j customerID
		if err := j.UnmarshalJSON([]byte(in)); !errors.Is(err, ErrJSON) {
			t.Errorf("UnmarshalJSON(%s) = %v, want ErrJSON", in, err)
		}
	}
	var gql customerID
	if err := gql.UnmarshalGQL(int64(1)); !errors.Is(err, ErrType) {
		t.Errorf("UnmarshalGQL(1) = %v, want ErrType", err)
	}
	if _, err := ParsePrefixed[order]("cus_00EZJCRCB4650"); !errors.Is(err, ErrPrefix) {
		t.Errorf("an order ID parsed a customer's: %v", err)
	}
	unchanged := customerID{MustParse("00EZJCRCB4650")}
	if err := unchanged.Bind("ord_00EZJCRCB4651"); err == nil || unchanged.String() != "cus_00EZJCRCB4650" {
		t.Errorf("a failed Bind changed the ID to %v (%v)", unchanged, err)
	}
}

// A prefixed ID's JSON errors show a number or true as JSON writes it,
// never quoted as if it were a string.
func TestPrefixedJSONErrorsShowValuesAsJSON(t *testing.T) {
	for in, want := range map[string]string{
		`16873543940839584`:           `flake: invalid JSON ID: 16873543940839584 is not a JSON string holding "cus_" and 13 characters`,
		`true`:                        `flake: invalid JSON ID: true is not a JSON string holding "cus_" and 13 characters`,
		`{"id": "cus_00EZJCRCB4650"}`: `flake: invalid JSON ID: {"id":"cus_00EZJCRCB4650"} is not a JSON string holding "cus_" and 13 characters`,
		`"cus_00EZJCRCB4650`:          `flake: invalid JSON ID: "\"cus_00EZJCRCB4650" is not a JSON string holding "cus_" and 13 characters`,
	} {
		var p customerID
		if err := p.UnmarshalJSON([]byte(in)); fmt.Sprint(err) != want {
			t.Errorf("%s:\n got %v\nwant %s", in, err, want)
		}
	}
}

func TestPrefixedRefusesAnInvalidPrefix(t *testing.T) {
	id := Prefixed[badPrefix]{MustParse("00EZJCRCB4650")}
	for format, want := range map[string]string{"%s": `%!(BADPREFIX "Cus")00EZJCRCB4650`, "%v": `%!(BADPREFIX "Cus")00EZJCRCB4650`} {
		if got := fmt.Sprintf(format, id); got != want {
			t.Errorf("Sprintf(%q) = %q, want %q", format, got, want)
		}
	}
	var w strings.Builder
	id.MarshalGQL(&w)
	if w.String() != "null" {
		t.Errorf("MarshalGQL = %s, want null", w.String())
	}
	if _, err := id.MarshalText(); !errors.Is(err, ErrPrefix) || !strings.Contains(err.Error(), `"Cus"`) {
		t.Errorf("MarshalText = %v, want ErrPrefix naming \"Cus\"", err)
	}
	if _, err := json.Marshal(id); !errors.Is(err, ErrPrefix) {
		t.Errorf("json.Marshal = %v, want ErrPrefix", err)
	}
	if _, err := ParsePrefixed[badPrefix]("Cus_00EZJCRCB4650"); !errors.Is(err, ErrPrefix) {
		t.Errorf("ParsePrefixed = %v, want ErrPrefix", err)
	}
	for _, p := range []string{"", "a", "cus", "a_b", "a1", strings.Repeat("a", MaxPrefixLen)} {
		if err := checkPrefix(p); (err == nil) != (p != "") {
			t.Errorf("checkPrefix(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"_a", "a_", "1a", "Ab", "a-b", "a b", "é", strings.Repeat("a", MaxPrefixLen+1)} {
		if err := checkPrefix(p); !errors.Is(err, ErrPrefix) {
			t.Errorf("checkPrefix(%q) = %v, want ErrPrefix", p, err)
		}
	}
	if _, err := (customerID{ID: -1}).MarshalText(); !errors.Is(err, ErrRange) {
		t.Errorf("negative MarshalText = %v, want ErrRange", err)
	}
}

func FuzzParsePrefixed(f *testing.F) {
	f.Add("cus_00EZJCRCB4650")
	f.Add("cus_7ZZZZZZZZZZZZ")
	f.Add("ord_00EZJCRCB4650")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParsePrefixed[customer](s)
		if err != nil {
			return
		}
		text, err := id.MarshalText()
		if err != nil {
			t.Fatalf("%q parsed to %v, which does not marshal: %v", s, id, err)
		}
		if !strings.EqualFold(string(text), s) || string(text[:4]) != "cus_" {
			t.Fatalf("%q parsed to %v, which marshals to %q", s, id, text)
		}
		back, err := ParsePrefixed[customer](string(text))
		if err != nil || back != id {
			t.Fatalf("%q round-trips to %v, %v", text, back, err)
		}
	})
}

// yamlLike calls UnmarshalYAML as yaml.v2 and v3 do: unmarshal decodes the
// node into the value given, failing for a mapping decoded into a string.
func TestPrefixedUnmarshalYAML(t *testing.T) {
	scalar := func(s string) func(any) error {
		return func(v any) error { *v.(*string) = s; return nil }
	}
	var id customerID
	if err := id.UnmarshalYAML(scalar("cus_00EZJCRCB4650")); err != nil || id.String() != "cus_00EZJCRCB4650" {
		t.Fatalf("UnmarshalYAML = %v, %v", id, err)
	}
	if err := id.UnmarshalYAML(scalar("00EZJCRCB4651")); !errors.Is(err, ErrPrefix) || id.String() != "cus_00EZJCRCB4650" {
		t.Fatalf("unprefixed UnmarshalYAML = %v, %v", id, err)
	}
	mapping := func(any) error { return errors.New("yaml: cannot unmarshal !!map into string") }
	if err := id.UnmarshalYAML(mapping); !errors.Is(err, ErrType) {
		t.Fatalf("mapping UnmarshalYAML = %v, want ErrType", err)
	}
}
