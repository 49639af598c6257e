package flake_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ulidflake/ulidflake/flake"
)

// The GraphQL and OpenAPI forms are the text form, with Parse's strictness.
func TestGQLAndBind(t *testing.T) {
	id := flake.MustParse("00EZJCRCB4650")
	var buf bytes.Buffer
	id.MarshalGQL(&buf)
	if buf.String() != `"00EZJCRCB4650"` {
		t.Fatalf("MarshalGQL = %s", buf.String())
	}
	buf.Reset()
	flake.ID(-1).MarshalGQL(&buf)
	if buf.String() != "null" {
		t.Fatalf("MarshalGQL(-1) = %s", buf.String())
	}
	for _, in := range []string{"00EZJCRCB4650", "00ezjcrcb4650"} {
		var got, bound flake.ID
		if err := got.UnmarshalGQL(in); err != nil || got != id {
			t.Fatalf("UnmarshalGQL(%q) = %s, %v", in, got, err)
		}
		if err := bound.Bind(in); err != nil || bound != id {
			t.Fatalf("Bind(%q) = %s, %v", in, bound, err)
		}
	}
	for _, in := range []any{int64(16873543940839584), 42, 1.5, nil, []byte("00EZJCRCB4650")} {
		got := id
		if err := got.UnmarshalGQL(in); !errors.Is(err, flake.ErrType) || got != id {
			t.Errorf("UnmarshalGQL(%T %v) = %v (id %s), want ErrType and id unchanged", in, in, err, got)
		}
	}
	for _, in := range []string{"", "16873543940839584", "00EZJCRCB465", "00EZJCRCB4650 ", "U0EZJCRCB4650"} {
		got := id
		err := got.Bind(in)
		_, perr := flake.Parse(in)
		if err == nil || err.Error() != perr.Error() || got != id {
			t.Errorf("Bind(%q) = %v (id %s), want Parse's error %v and id unchanged", in, err, got, perr)
		}
	}
}

type gqlCus struct{}

func (gqlCus) Prefix() string { return "cus" }

// A GraphQL value that is not a string is refused with a message that
// names it as GraphQL gave it (a number unquoted, with its article) and
// says what to send.
func TestUnmarshalGQLMessages(t *testing.T) {
	const id = `flake: cannot scan into an ID: GraphQL gave %s, not a string: send the ID as a string of 13 Crockford Base32 characters`
	const cus = `flake: cannot scan into an ID: GraphQL gave %s, not a string: send the ID as a string, "cus_" followed by 13 characters`
	long := json.Number(strings.Repeat("9", 70))
	for _, tc := range []struct {
		in   any
		want string
	}{
		{int64(95834049799701782), "the number 95834049799701782"}, // a literal
		{json.Number("123"), "the number 123"},                     // a variable
		{1.5, "the number 1.5"},
		{long, "the number " + strings.Repeat("9", 64) + "... (70 characters)"},
		{true, "the boolean true"},
		{nil, "null"},
		{[]any{"00EZJCRCB4650"}, "a list"},
		{map[string]any{"id": "00EZJCRCB4650"}, "an object"},
		{[]byte("00EZJCRCB4650"), "a value of Go type []uint8"},
	} {
		var got flake.ID
		if err := got.UnmarshalGQL(tc.in); err == nil || err.Error() != fmt.Sprintf(id, tc.want) {
			t.Errorf("ID.UnmarshalGQL(%T %v) = %v,\nwant %s", tc.in, tc.in, err, fmt.Sprintf(id, tc.want))
		}
		var p flake.Prefixed[gqlCus]
		if err := p.UnmarshalGQL(tc.in); err == nil || err.Error() != fmt.Sprintf(cus, tc.want) {
			t.Errorf("Prefixed.UnmarshalGQL(%T %v) = %v,\nwant %s", tc.in, tc.in, err, fmt.Sprintf(cus, tc.want))
		}
	}
}

func ExampleID_MarshalGQL() {
	var buf bytes.Buffer
	flake.MustParse("00EZJCRCB4650").MarshalGQL(&buf)
	var id flake.ID
	err := id.UnmarshalGQL("00ezjcrcb4650")
	fmt.Println(buf.String(), id, err)
	// Output: "00EZJCRCB4650" 00EZJCRCB4650 <nil>
}

func ExampleID_Bind() {
	var after flake.ID // ?after=00EZJCRCB4650, as oapi-codegen binds it
	err := after.Bind("00EZJCRCB4650")
	fmt.Println(after.Int64(), err)
	// Output: 16873543940839584 <nil>
}
