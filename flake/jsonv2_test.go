//go:build goexperiment.jsonv2

package flake

import (
	"bytes"
	jsonv1 "encoding/json"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"io"
	"strings"
	"testing"
)

// json/v2 writes and reads what encoding/json does, with the same errors,
// through MarshalJSONTo and UnmarshalJSONFrom.
func TestJSONv2MatchesJSON(t *testing.T) {
	type row struct {
		ID   ID  `json:"id"`
		Ref  *ID `json:"ref"`
		Note string
	}
	for _, id := range []ID{1, 42, MaxJSONNumber, MaxJSONNumber + 1, MustParse("00EZJCRCB4650"), Max} {
		in := row{ID: id, Ref: &id, Note: "x"}
		v2, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		v1, err := jsonv1.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(v1, v2) {
			t.Fatalf("v2 %s, v1 %s", v2, v1)
		}
		var out row
		if err := json.Unmarshal(v2, &out); err != nil || out.ID != id || *out.Ref != id {
			t.Fatalf("%s: %+v, %v", v2, out, err)
		}
	}
	for _, in := range []string{`"16873543940839584"`, `""`, `"000000000000U"`, `9007199254740993`, `-1`, `true`, `"8000000000000"`} {
		var a, b ID
		e1 := jsonv1.Unmarshal([]byte(in), &a)
		e2 := json.Unmarshal([]byte(in), &b)
		if e1 == nil || e2 == nil {
			t.Fatalf("%s: v1 %v, v2 %v; want errors", in, e1, e2)
		}
		for _, sentinel := range []error{ErrLength, ErrCharacter, ErrJSON, ErrRange} {
			if errors.Is(e1, sentinel) != errors.Is(e2, sentinel) {
				t.Errorf("%s: v1 %v, v2 %v", in, e1, e2)
			}
		}
		if !strings.Contains(e2.Error(), strings.TrimPrefix(e1.Error(), "json: ")) {
			t.Errorf("%s: v2 says %q, v1 %q", in, e2, e1)
		}
	}
}

// A negative ID is refused by json/v2 as by encoding/json.
func TestJSONv2Negative(t *testing.T) {
	_, e1 := jsonv1.Marshal(ID(-5))
	_, e2 := json.Marshal(ID(-5))
	if e1 == nil || e2 == nil || !errors.Is(e2, ErrRange) {
		t.Fatalf("v1 %v, v2 %v", e1, e2)
	}
}

// TrustedID keeps its exact integers under json/v2, whose methods
// promoted from ID would refuse them.
func TestJSONv2TrustedID(t *testing.T) {
	var rows []struct {
		ID TrustedID `json:"id"`
	}
	if err := json.Unmarshal([]byte(`[{"id":95834049799701782},{"id":"00EZJCRCB4650"}]`), &rows); err != nil {
		t.Fatal(err)
	}
	if rows[0].ID.ID != 95834049799701782 || rows[1].ID.ID != MustParse("00EZJCRCB4650") {
		t.Fatalf("%+v", rows)
	}
}

// MarshalJSONTo and UnmarshalJSONFrom allocate nothing.
func TestJSONv2Allocations(t *testing.T) {
	id := MustParse("00EZJCRCB4650")
	enc := jsontext.NewEncoder(io.Discard)
	if n := testing.AllocsPerRun(1000, func() {
		if err := id.MarshalJSONTo(enc); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("MarshalJSONTo: %v allocations", n)
	}
	dec := jsontext.NewDecoder(strings.NewReader(strings.Repeat(`"00EZJCRCB4650" `, 2000)))
	var got ID
	if n := testing.AllocsPerRun(1000, func() {
		if err := got.UnmarshalJSONFrom(dec); err != nil {
			t.Fatal(err)
		}
	}); n != 0 || got != id {
		t.Errorf("UnmarshalJSONFrom: %v allocations, %v", n, got)
	}
}

func BenchmarkMarshalJSONv2(b *testing.B) {
	id := MustParse("00EZJCRCB4650")
	enc := jsontext.NewEncoder(io.Discard)
	b.ReportAllocs()
	for b.Loop() {
		_ = id.MarshalJSONTo(enc)
	}
}

func BenchmarkUnmarshalJSONv2(b *testing.B) {
	in := []byte(strings.Repeat(`"00EZJCRCB4650" `, 1000))
	r := bytes.NewReader(in)
	dec := jsontext.NewDecoder(r)
	b.ReportAllocs()
	var id ID
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 {
			r.Reset(in)
			dec.Reset(r)
		}
		_ = id.UnmarshalJSONFrom(dec)
	}
}
