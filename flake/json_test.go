package flake

import (
	"encoding/json"
	"errors"
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
		{`9223372036854775808`, 0, ErrIntRange},
		{`-1`, 0, ErrIntRange},
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
