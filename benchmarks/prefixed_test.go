package benchmarks

import (
	"encoding/json"
	"testing"

	"go.jetify.com/typeid"

	"github.com/ulidflake/ulidflake/flake"
)

// Prefixed IDs: ulidflake's flake.Prefixed (a 64-bit ID, prefix in the Go
// type) against TypeID's Go implementation (a UUIDv7, prefix and suffix
// held as strings), through each one's public API. Both as their
// documentation declares a per-entity type.

type cusPrefix struct{}

func (cusPrefix) Prefix() string { return "cus" }

type (
	flakeCustomerID  = flake.Prefixed[cusPrefix]
	typeidCustomerID struct{ typeid.TypeID[cusPrefix] }
)

// prefixedPeer is one prefixed-ID scheme: a text form and its operations.
type prefixedPeer struct {
	name      string
	text      string
	parse     func(string) error
	format    func() string
	marshal   func() ([]byte, error)
	unmarshal func([]byte) error
}

func prefixedPeers(tb testing.TB) []prefixedPeer {
	f := flakeCustomerID{ID: flake.MustParse("00EZJCRCB4650")}
	tid, err := typeid.Parse[typeidCustomerID]("cus_01h455vb4pex5vsknk084sn02q")
	if err != nil {
		tb.Fatal(err)
	}
	return []prefixedPeer{
		{
			name: "ulidflake", text: f.String(),
			parse: func(s string) error {
				id, err := flake.ParsePrefixed[cusPrefix](s)
				sinkFlake = id.ID
				return err
			},
			format:  f.String,
			marshal: func() ([]byte, error) { return json.Marshal(f) },
			unmarshal: func(b []byte) error {
				var v flakeCustomerID
				return json.Unmarshal(b, &v)
			},
		},
		{
			name: "typeid", text: tid.String(),
			parse: func(s string) error {
				id, err := typeid.Parse[typeidCustomerID](s)
				sinkStr = id.Suffix()
				return err
			},
			format:  tid.String,
			marshal: func() ([]byte, error) { return json.Marshal(tid) },
			unmarshal: func(b []byte) error {
				var v typeidCustomerID
				return json.Unmarshal(b, &v)
			},
		},
	}
}

// TestPrefixedPeersRoundTrip: each scheme's text, parse and JSON agree, so
// that the benchmarks below measure working code.
func TestPrefixedPeersRoundTrip(t *testing.T) {
	for _, p := range prefixedPeers(t) {
		if err := p.parse(p.text); err != nil {
			t.Fatalf("%s: parse %q: %v", p.name, p.text, err)
		}
		if p.format() != p.text {
			t.Fatalf("%s: format %q, want %q", p.name, p.format(), p.text)
		}
		b, err := p.marshal()
		if err != nil || string(b) != `"`+p.text+`"` {
			t.Fatalf("%s: JSON %s, %v", p.name, b, err)
		}
		if err := p.unmarshal(b); err != nil {
			t.Fatalf("%s: JSON in: %v", p.name, err)
		}
		if err := p.parse("ord_" + p.text[4:]); err == nil {
			t.Fatalf("%s: parsed another prefix", p.name)
		}
	}
}

func BenchmarkPrefixedParse(b *testing.B) {
	for _, p := range prefixedPeers(b) {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkErr = p.parse(p.text)
			}
		})
	}
}

func BenchmarkPrefixedString(b *testing.B) {
	for _, p := range prefixedPeers(b) {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkStr = p.format()
			}
		})
	}
}

func BenchmarkPrefixedMarshalJSON(b *testing.B) {
	for _, p := range prefixedPeers(b) {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkBytes, sinkErr = p.marshal()
			}
		})
	}
}

func BenchmarkPrefixedUnmarshalJSON(b *testing.B) {
	for _, p := range prefixedPeers(b) {
		in := []byte(`"` + p.text + `"`)
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkErr = p.unmarshal(in)
			}
		})
	}
}
