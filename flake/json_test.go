package flake

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A decimal string, as JavaScript's BigInt.toString() or protojson send,
// is refused with an error that says why and what to send instead.
func TestJSONDecimalString(t *testing.T) {
	for _, tc := range []struct{ in, send string }{
		{`"95834049799701782"`, `"02N3RHXZV5H8P"`},
		{`"16873543940839584"`, `"00EZJCRCB4650"`},
		{`"1"`, `"0000000000001"`},
		{`"12345678901234"`, `"0000B79SWWBZJ"`},
		{`"1687354394083958\u0034"`, `"00EZJCRCB4650"`}, // escaped: the same rule
	} {
		var id ID
		err := json.Unmarshal([]byte(tc.in), &id)
		if !errors.Is(err, ErrLength) {
			t.Fatalf("%s: %v, want ErrLength", tc.in, err)
		}
		for _, want := range []string{"decimal", "Base32", "13-character", tc.send} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", tc.in, err, want)
			}
		}
	}
	// An all-digit string of 13 characters is Base32: the rule has no
	// exception.
	var id ID
	if err := json.Unmarshal([]byte(`"0000000000001"`), &id); err != nil || id != 1 {
		t.Fatalf("13 digits: %d, %v", id, err)
	}
	// Decimal strings beyond an ID's range say so too.
	err := json.Unmarshal([]byte(`"99999999999999999999"`), &id)
	if !errors.Is(err, ErrLength) || !strings.Contains(err.Error(), "decimal") {
		t.Errorf("20 digits: %v", err)
	}
}

// TrustedID decodes exact JSON integers of any size, as PostgreSQL's
// row_to_json and json_agg write bigints; it still refuses what is not an
// ID, and decodes and encodes strings as ID does.
func TestTrustedID(t *testing.T) {
	var row struct {
		ID  TrustedID  `json:"id"`
		Ref *TrustedID `json:"ref"`
	}
	in := `{"id": 95834049799701782, "ref": 9223372036854775807}`
	if err := json.Unmarshal([]byte(in), &row); err != nil {
		t.Fatal(err)
	}
	if row.ID.ID != 95834049799701782 || row.Ref.ID != Max {
		t.Fatalf("decoded %d, %d", row.ID.ID, row.Ref.ID)
	}
	out, _ := json.Marshal(row)
	if string(out) != `{"id":"02N3RHXZV5H8P","ref":"7ZZZZZZZZZZZZ"}` {
		t.Fatalf("encoded %s", out)
	}
	for _, tc := range []struct {
		in   string
		want ID
		err  error
	}{
		{`"02N3RHXZV5H8P"`, 95834049799701782, nil},
		{`16873543940839584`, 16873543940839584, nil},
		{`0`, 0, nil},
		{`9223372036854775808`, 0, ErrRange},
		{`-1`, 0, ErrRange},
		{`1.5`, 0, ErrJSON},
		{`1e17`, 0, ErrJSON},
		{`"95834049799701782"`, 0, ErrLength},
		{`true`, 0, ErrJSON},
	} {
		var got TrustedID
		err := json.Unmarshal([]byte(tc.in), &got)
		if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) || got.ID != tc.want {
			t.Errorf("%s: %d, %v; want %d, %v", tc.in, got.ID, err, tc.want, tc.err)
		}
	}
	got := TrustedID{ID: 7}
	if err := json.Unmarshal([]byte(`null`), &got); err != nil || got.ID != 7 {
		t.Errorf("null: %d, %v", got.ID, err)
	}
	// The plain ID still refuses the same number.
	var plain ID
	if err := json.Unmarshal([]byte(`95834049799701782`), &plain); !errors.Is(err, ErrJSON) || !strings.Contains(err.Error(), "TrustedID") {
		t.Errorf("ID: %v, want ErrJSON naming TrustedID", err)
	}
}

// JSON errors show a number, true or an object as JSON writes it, never
// quoted as if it were a string, and cut a long one as quote cuts.
func TestJSONErrorsShowValuesAsJSON(t *testing.T) {
	long := strings.Repeat("9", 100)
	above := "the number 95834049799701782 is above 2^53: a JSON number that large has lost precision " +
		"in JavaScript before it arrives (it may now name another ID); send the 13-character string " +
		"(or, for JSON written with exact integers, as PostgreSQL writes it, decode into flake.TrustedID)"
	for _, tc := range []struct {
		in      string
		id      string // the error of ID.UnmarshalJSON
		trusted string // of TrustedID.UnmarshalJSON, when not id's
	}{
		{`95834049799701782`, "flake: invalid JSON ID: " + above, "<nil>"},
		{`-1`, "flake: integer out of range: the number -1 is negative", ""},
		{`9223372036854775808`, "flake: integer out of range: the number 9223372036854775808 is above 9223372036854775807", ""},
		{long, "flake: integer out of range: the number " + long[:64] + "... (100 bytes) is above 9223372036854775807", ""},
		{`1.5`, "flake: invalid JSON ID: the number 1.5 is not a non-negative integer",
			"flake: invalid JSON ID: the number 1.5 is not an integer"},
		{`1e17`, "flake: invalid JSON ID: the number 1e17 is not a non-negative integer",
			"flake: invalid JSON ID: the number 1e17 is not an integer"},
		{`true`, "flake: invalid JSON ID: true is neither a string nor a non-negative integer", ""},
		{`{"id": 1}`, `flake: invalid JSON ID: {"id":1} is neither a string nor a non-negative integer`, ""},
		{`1x`, `flake: invalid JSON ID: "1x" is not valid JSON`, ""},
	} {
		var id ID
		if err := id.UnmarshalJSON([]byte(tc.in)); fmt.Sprint(err) != tc.id {
			t.Errorf("ID %s:\n got %v\nwant %s", tc.in, err, tc.id)
		}
		if tc.trusted == "" {
			tc.trusted = tc.id
		}
		var trusted TrustedID
		if err := trusted.UnmarshalJSON([]byte(tc.in)); fmt.Sprint(err) != tc.trusted {
			t.Errorf("TrustedID %s:\n got %v\nwant %s", tc.in, err, tc.trusted)
		}
	}
}
