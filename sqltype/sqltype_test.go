package sqltype

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ulidflake/ulidflake/flake"
)

// Compile-time checks of the interfaces users rely on.
var (
	_ driver.Valuer  = ID(0)
	_ sql.Scanner    = (*ID)(nil)
	_ driver.Valuer  = NullID{}
	_ sql.Scanner    = (*NullID)(nil)
	_ driver.Valuer  = TextID{}
	_ sql.Scanner    = (*TextID)(nil)
	_ json.Marshaler = ID(0)
)

var sample = ID(flake.MustParse("00EZJCRCB4650"))

func TestIDValue(t *testing.T) {
	v, err := sample.Value()
	if err != nil || v != int64(16873543940839584) {
		t.Fatalf("Value = %#v, %v", v, err)
	}
	if _, err := ID(0).Value(); !errors.Is(err, ErrZeroID) {
		t.Fatalf("Value of zero: %v, want ErrZeroID", err)
	}
	if _, err := ID(-3).Value(); !errors.Is(err, flake.ErrRange) {
		t.Fatalf("Value of -3: %v, want ErrRange", err)
	}
}

func TestIDScan(t *testing.T) {
	for _, tc := range []struct {
		src  any
		want ID
		err  error
		name string // what the error must mention
	}{
		{int64(16873543940839584), sample, nil, ""},
		{[]byte("16873543940839584"), sample, nil, ""},
		{"9223372036854775807", ID(flake.Max), nil, ""},
		{int64(0), 0, nil, ""},
		{int64(-1), 0, flake.ErrRange, "-1"},
		{"-42", 0, flake.ErrRange, "-42"},
		{[]byte("12.5"), 0, flake.ErrCharacter, "12.5"},
		{"00EZJCRCB4650", 0, flake.ErrCharacter, "00EZJCRCB4650"}, // text form in a bigint scan
		{"9223372036854775808", 0, flake.ErrRange, "9223372036854775808"},
		{nil, 0, ErrNull, "NULL"},
		{float64(1.5), 0, ErrType, "float64 1.5"},
		{true, 0, ErrType, "bool true"},
	} {
		id := ID(99)
		err := id.Scan(tc.src)
		if !errors.Is(err, tc.err) || (err != nil) != (tc.err != nil) {
			t.Errorf("Scan(%#v) error = %v, want %v", tc.src, err, tc.err)
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), tc.name) {
				t.Errorf("Scan(%#v) error %q does not name %q", tc.src, err, tc.name)
			}
			if id != 99 {
				t.Errorf("failed Scan(%#v) changed the ID to %d", tc.src, id)
			}
			continue
		}
		if id != tc.want {
			t.Errorf("Scan(%#v) = %d, want %d", tc.src, id, tc.want)
		}
	}
}

func TestNullID(t *testing.T) {
	var n NullID
	if err := n.Scan(nil); err != nil || n.Valid {
		t.Fatalf("Scan(nil) = %+v, %v", n, err)
	}
	if v, err := n.Value(); v != nil || err != nil {
		t.Fatalf("Value of NULL = %v, %v", v, err)
	}
	if err := n.Scan(int64(sample)); err != nil || !n.Valid || n.ID != sample {
		t.Fatalf("Scan = %+v, %v", n, err)
	}
	if v, err := n.Value(); v != int64(sample) || err != nil {
		t.Fatalf("Value = %v, %v", v, err)
	}
	if _, err := (NullID{Valid: true}).Value(); !errors.Is(err, ErrZeroID) {
		t.Fatalf("a valid zero NullID wrote: %v", err)
	}
	if err := n.Scan(int64(-1)); !errors.Is(err, flake.ErrRange) || n.Valid {
		t.Fatalf("Scan(-1) = %+v, %v", n, err)
	}
	for in, want := range map[string]NullID{`null`: {}, `"00EZJCRCB4650"`: {sample, true}} {
		var got NullID
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != want {
			t.Errorf("Unmarshal(%s) = %+v, %v", in, got, err)
		}
		out, _ := json.Marshal(want)
		if string(out) != in {
			t.Errorf("Marshal(%+v) = %s, want %s", want, out, in)
		}
	}
	if err := json.Unmarshal([]byte(`true`), &n); !errors.Is(err, flake.ErrJSON) {
		t.Errorf("Unmarshal(true) error = %v", err)
	}
}

func TestTextID(t *testing.T) {
	tid := TextID{sample}
	if v, err := tid.Value(); v != "00EZJCRCB4650" || err != nil { // a string, so that SQLite stores text
		t.Fatalf("Value = %v, %v", v, err)
	}
	if _, err := (TextID{}).Value(); !errors.Is(err, ErrZeroID) {
		t.Fatalf("zero TextID wrote: %v", err)
	}
	for _, tc := range []struct {
		src any
		err error
	}{
		{"00ezjcrcb4650", nil},
		{[]byte("00EZJCRCB4650"), nil},
		{"16873543940839584", flake.ErrLength},
		{"8000000000000", flake.ErrRange},
		{"00EZJCRCB465U", flake.ErrCharacter},
		{nil, ErrNull},
		{int64(5), ErrType},
	} {
		var got TextID
		err := got.Scan(tc.src)
		if !errors.Is(err, tc.err) || (err != nil) != (tc.err != nil) {
			t.Errorf("Scan(%#v) error = %v, want %v", tc.src, err, tc.err)
		} else if err == nil && got.ID != sample {
			t.Errorf("Scan(%#v) = %s", tc.src, got)
		}
	}
	j, _ := json.Marshal(tid)
	if string(j) != `"00EZJCRCB4650"` {
		t.Errorf("JSON = %s", j)
	}
}

// Scan takes the module's own types, as ent's generated CreateBulk passes
// them (nodes[i].ID.Scan(specs[i].ID.Value) with a *ID).
func TestScanOwnTypes(t *testing.T) {
	want := ID(flake.MustParse("00EZJCRCB4650"))
	fid := flake.ID(want)
	for _, src := range []any{want, &want, fid, &fid, Bound(want)} {
		var id ID
		if err := id.Scan(src); err != nil || id != want {
			t.Errorf("ID.Scan(%T) = %s, %v", src, id, err)
		}
		var n NullID
		if err := n.Scan(src); err != nil || !n.Valid || n.ID != want {
			t.Errorf("NullID.Scan(%T) = %+v, %v", src, n, err)
		}
		var tx TextID
		if err := tx.Scan(src); err != nil || tx.ID != want {
			t.Errorf("TextID.Scan(%T) = %s, %v", src, tx.ID, err)
		}
	}
	var nilID *ID
	var id ID
	if err := id.Scan(nilID); !errors.Is(err, ErrNull) {
		t.Errorf("ID.Scan(nil *ID) = %v, want ErrNull", err)
	}
	n := NullID{ID: want, Valid: true}
	if err := n.Scan(nilID); err != nil || n.Valid {
		t.Errorf("NullID.Scan(nil *ID) = %+v, %v", n, err)
	}
	if err := n.Scan(NullID{ID: want, Valid: true}); err != nil || n.ID != want || !n.Valid {
		t.Errorf("NullID.Scan(NullID) = %+v, %v", n, err)
	}
	neg := ID(-5)
	if err := id.Scan(&neg); !errors.Is(err, flake.ErrRange) {
		t.Errorf("ID.Scan(*ID -5) = %v, want ErrRange", err)
	}
}

// NullID has the forms ID has; the not-valid NullID is the empty form, and
// JSON "" (an empty form field) decodes to it.
func TestNullIDForms(t *testing.T) {
	want := NullID{ID: ID(flake.MustParse("00EZJCRCB4650")), Valid: true}
	for _, n := range []NullID{want, {}} {
		txt, err := n.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back NullID
		if err := back.UnmarshalText(txt); err != nil || back != n {
			t.Errorf("text round trip of %+v: %q -> %+v, %v", n, txt, back, err)
		}
		bin, err := n.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back = NullID{ID: 7, Valid: true}
		if err := back.UnmarshalBinary(bin); err != nil || back != n {
			t.Errorf("binary round trip of %+v: %x -> %+v, %v", n, bin, back, err)
		}
		js, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		back = NullID{ID: 7, Valid: true}
		if err := json.Unmarshal(js, &back); err != nil || back != n {
			t.Errorf("JSON round trip of %+v: %s -> %+v, %v", n, js, back, err)
		}
		if n.IsZero() == n.Valid {
			t.Errorf("IsZero(%+v) = %v", n, n.IsZero())
		}
	}
	var n NullID = want
	if err := json.Unmarshal([]byte(`""`), &n); err != nil || n.Valid {
		t.Errorf(`NullID from JSON "": %+v, %v`, n, err)
	}
	var id ID
	err := json.Unmarshal([]byte(`""`), &id)
	if !errors.Is(err, flake.ErrLength) || !strings.Contains(err.Error(), "empty") {
		t.Errorf(`ID from JSON "": %v, want an error saying it is empty`, err)
	}
}

// A Bound writes the zero ID, which an ID refuses; the refusal does not
// claim that anything was written.
func TestBound(t *testing.T) {
	v, err := Bound(0).Value()
	if err != nil || v != int64(0) {
		t.Fatalf("Bound(0).Value() = %v, %v", v, err)
	}
	if _, err := Bound(-1).Value(); !errors.Is(err, flake.ErrRange) {
		t.Fatalf("Bound(-1).Value() = %v", err)
	}
	_, err = ID(0).Value()
	if !errors.Is(err, ErrZeroID) || strings.Contains(err.Error(), "written") || !strings.Contains(err.Error(), "Bound") {
		t.Fatalf("ID(0).Value() error %q: want ErrZeroID, naming Bound, not saying written", err)
	}
}

// The zero ID is unset: decoded into a NullID it is NULL, and a NullID that
// is valid but zero is refused with an error that says so.
func TestNullIDZeroIsNull(t *testing.T) {
	for _, in := range []string{`"0000000000000"`, `0`} {
		n := NullID{ID: sample, Valid: true}
		if err := json.Unmarshal([]byte(in), &n); err != nil || n.Valid {
			t.Fatalf("JSON %s: %+v, %v; want not valid", in, n, err)
		}
	}
	var n NullID
	if err := n.UnmarshalText([]byte("0000000000000")); err != nil || n.Valid {
		t.Fatalf("text zero: %+v, %v", n, err)
	}
	for _, src := range []any{int64(0), "0", []byte("0"), NullID{Valid: true}, &NullID{Valid: true}} {
		n := NullID{ID: sample, Valid: true}
		if err := n.Scan(src); err != nil || n.Valid || n.ID != 0 {
			t.Fatalf("Scan(%#v): %+v, %v; want not valid", src, n, err)
		}
	}
	_, err := NullID{Valid: true}.Value()
	if !errors.Is(err, ErrZeroID) || !strings.Contains(err.Error(), "leave Valid false") {
		t.Fatalf("Value of a valid zero NullID: %v", err)
	}
}

// Every type reads and writes zero, NULL and negative values by the one
// rule of flake.ID.Scan and Value (internal/bigint). A NullID, *NullID or
// TextID holding a negative ID scanned as valid, and a negative TextID
// wrote text that no parse reads back, before they called it.
func TestNegativeOwnTypes(t *testing.T) {
	neg := ID(-5)
	for _, src := range []any{NullID{ID: neg, Valid: true}, &NullID{ID: neg, Valid: true}} {
		n := NullID{ID: sample, Valid: true}
		if err := n.Scan(src); !errors.Is(err, flake.ErrRange) || n != (NullID{}) {
			t.Errorf("NullID.Scan(%#v) = %+v, %v; want not valid, ErrRange", src, n, err)
		}
	}
	for _, src := range []any{TextID{neg}, &TextID{neg}} {
		tx := TextID{sample}
		if err := tx.Scan(src); !errors.Is(err, flake.ErrRange) || tx.ID != sample {
			t.Errorf("TextID.Scan(%#v) = %v, %v; want unchanged, ErrRange", src, tx.ID, err)
		}
	}
	if v, err := (TextID{neg}).Value(); !errors.Is(err, flake.ErrRange) {
		t.Errorf("TextID{-5}.Value() = %v, %v; want ErrRange", v, err)
	}
}

// The errors of the wrappers name each package once, and say what is
// wrong.
func TestErrorMessages(t *testing.T) {
	var tx TextID
	var n NullID
	for _, tc := range []struct {
		err  error
		want string
	}{
		{second(Bound(-5).Value()), "flake: integer out of range: -5 is negative"},
		{second(NullID{ID: -5, Valid: true}.Value()), "flake: integer out of range: -5 is negative"},
		{n.Scan(int64(-5)), "flake: integer out of range: -5 is negative"},
		{tx.Scan(nil), "flake: NULL scanned into a non-null ID (use NullID)"},
		{tx.Scan((*TextID)(nil)), "flake: NULL scanned into a non-null ID (use NullID)"},
		{tx.Scan(ID(-5)), "flake: integer out of range: -5 is negative"},
		{tx.Scan("00EZJCRCB465"), `sqltype: scanning text ID: flake: wrong length: "00EZJCRCB465" is 12 bytes, want 13`},
		{tx.Scan(int64(5)), "flake: cannot scan into an ID: int64 5 is not text"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("error %q, want %q", tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }
