// Package benchmarks compares ulidflake with its peers, and measures it in
// PostgreSQL against bigserial and UUIDs. It is a module of its own so that
// the peers stay out of ulidflake users' dependency graph. cmd/report runs
// everything and writes ../BENCHMARKS.md.
package benchmarks

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/bwmarrin/snowflake"
	gofrs "github.com/gofrs/uuid/v5"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/rs/xid"
	"github.com/segmentio/ksuid"
	"github.com/sony/sonyflake"

	"github.com/ulidflake/ulidflake/flake"
)

// Sinks.
var (
	sinkAny   any
	sinkStr   string
	sinkBytes []byte
	sinkErr   error
	sinkFlake flake.ID
	sinkSnow  snowflake.ID
	sinkU64   uint64
	sinkULID  ulid.ULID
	sinkUUID  [16]byte
	sinkXID   xid.ID
	sinkKSUID ksuid.KSUID
)

// peer is one ID scheme, through its own public API.
type peer struct {
	name     string
	generate func() any          // one new ID (nil when the scheme has no generator of its own)
	burst    func(n int)         // n new IDs, unboxed; an error is stored only when there is one (an interface store costs a write barrier check)
	capped   bool                // the generator throttles by design
	text     string              // a canonical text form
	parse    func(string) error  // text to ID
	format   func() string       // ID to text
	appendTo func([]byte) []byte // ID appended to a buffer
	jsonID   any                 // a value to marshal
	jsonPtr  func() any          // a pointer to unmarshal into
}

func peers(tb testing.TB) []peer {
	fg, _ := flake.NewGenerator()
	fid := flake.MustParse("02N05H8ARNMJ8")
	node, err := snowflake.NewNode(1)
	if err != nil {
		tb.Fatal(err)
	}
	sid := node.Generate()
	sf := sonyflake.NewSonyflake(sonyflake.Settings{MachineID: func() (uint16, error) { return 1, nil }})
	sonyID, _ := sf.NextID()
	oid := ulid.Make()
	gid, _ := uuid.NewV7()
	fuid, _ := gofrs.NewV7()
	x := xid.New()
	k := ksuid.New()
	return []peer{
		{
			name:     "ulidflake",
			generate: func() any { id, _ := fg.New(); return id },
			burst: func(n int) {
				for range n {
					id, err := fg.New()
					sinkFlake = id
					if err != nil {
						sinkErr = err
					}
				}
			},
			text:     fid.String(),
			parse:    func(s string) error { _, err := flake.Parse(s); return err },
			format:   fid.String,
			appendTo: func(b []byte) []byte { b, _ = fid.AppendText(b); return b },
			jsonID:   fid, jsonPtr: func() any { return new(flake.ID) },
		},
		{
			name:     "oklog-ulid",
			generate: func() any { return ulid.Make() },
			burst: func(n int) {
				for range n {
					sinkULID = ulid.Make()
				}
			},
			text:   oid.String(),
			parse:  func(s string) error { _, err := ulid.ParseStrict(s); return err },
			format: oid.String,
			appendTo: func(b []byte) []byte {
				n := len(b)
				b = append(b, make([]byte, ulid.EncodedSize)...)
				_ = oid.MarshalTextTo(b[n:])
				return b
			},
			jsonID: oid, jsonPtr: func() any { return new(ulid.ULID) },
		},
		{
			name:     "google-uuid-v7",
			generate: func() any { id, _ := uuid.NewV7(); return id },
			burst: func(n int) {
				for range n {
					id, err := uuid.NewV7()
					sinkUUID = id
					if err != nil {
						sinkErr = err
					}
				}
			},
			text:     gid.String(),
			parse:    func(s string) error { _, err := uuid.Parse(s); return err },
			format:   gid.String,
			appendTo: func(b []byte) []byte { t, _ := gid.MarshalText(); return append(b, t...) },
			jsonID:   gid, jsonPtr: func() any { return new(uuid.UUID) },
		},
		{
			name:     "gofrs-uuid-v7",
			generate: func() any { id, _ := gofrs.NewV7(); return id },
			burst: func(n int) {
				for range n {
					id, err := gofrs.NewV7()
					sinkUUID = id
					if err != nil {
						sinkErr = err
					}
				}
			},
			text:     fuid.String(),
			parse:    func(s string) error { _, err := gofrs.FromString(s); return err },
			format:   fuid.String,
			appendTo: func(b []byte) []byte { t, _ := fuid.MarshalText(); return append(b, t...) },
			jsonID:   fuid, jsonPtr: func() any { return new(gofrs.UUID) },
		},
		{
			name:     "bwmarrin-snowflake",
			generate: func() any { return node.Generate() },
			burst: func(n int) {
				for range n {
					sinkSnow = node.Generate()
				}
			},
			capped:   true,
			text:     sid.String(),
			parse:    func(s string) error { _, err := snowflake.ParseString(s); return err },
			format:   sid.String,
			appendTo: func(b []byte) []byte { return strconv.AppendInt(b, sid.Int64(), 10) },
			jsonID:   sid, jsonPtr: func() any { return new(snowflake.ID) },
		},
		{
			name:     "sony-sonyflake",
			generate: func() any { id, _ := sf.NextID(); return id },
			burst: func(n int) {
				for range n {
					id, err := sf.NextID()
					sinkU64 = id
					if err != nil {
						sinkErr = err
					}
				}
			},
			capped:   true,
			text:     strconv.FormatUint(sonyID, 10),
			parse:    func(s string) error { _, err := strconv.ParseUint(s, 10, 64); return err },
			format:   func() string { return strconv.FormatUint(sonyID, 10) },
			appendTo: func(b []byte) []byte { return strconv.AppendUint(b, sonyID, 10) },
			jsonID:   sonyID, jsonPtr: func() any { return new(uint64) },
		},
		{
			name:     "rs-xid",
			generate: func() any { return xid.New() },
			burst: func(n int) {
				for range n {
					sinkXID = xid.New()
				}
			},
			text:   x.String(),
			parse:  func(s string) error { _, err := xid.FromString(s); return err },
			format: x.String,
			appendTo: func(b []byte) []byte {
				n := len(b)
				b = append(b, make([]byte, 20)...)
				x.Encode(b[n:])
				return b
			},
			jsonID: x, jsonPtr: func() any { return new(xid.ID) },
		},
		{
			name:     "segmentio-ksuid",
			generate: func() any { return ksuid.New() },
			burst: func(n int) {
				for range n {
					sinkKSUID = ksuid.New()
				}
			},
			text:     k.String(),
			parse:    func(s string) error { _, err := ksuid.Parse(s); return err },
			format:   k.String,
			appendTo: func(b []byte) []byte { return k.Append(b) },
			jsonID:   k, jsonPtr: func() any { return new(ksuid.KSUID) },
		},
	}
}

// BenchmarkGenerate is one new ID, serially, as each library makes it:
// throttled generators (snowflake: 4,096 a millisecond; sonyflake: 256 per
// 10 ms) include their waits. "clock" is the floor: one time.Now.
func BenchmarkGenerate(b *testing.B) {
	b.Run("clock", func(b *testing.B) {
		for b.Loop() {
			sinkAny = time.Now()
		}
	})
	for _, p := range peers(b) {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkAny = p.generate()
			}
		})
	}
}

// BenchmarkGenerateParallel is the same from all cores at once.
func BenchmarkGenerateParallel(b *testing.B) {
	for _, p := range peers(b) {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var v any
				for pb.Next() {
					v = p.generate()
				}
				sinkAny = v
			})
		})
	}
}

// BenchmarkGenerateBurst measures every generator's own code in bursts,
// with the peers in rotation so that each round of the loop gives all of
// them the same machine: every peer in turn gets a pause of 10 ms (which
// keeps every rate cap out of the figures), then makes a burst of 200 IDs,
// unboxed, timed by the benchmark itself; each round starts with the next
// peer, so that no peer always follows the same one (the timer is never stopped:
// StopTimer and StartTimer stop the world to read memory statistics). It
// reports, for each peer p, the median over its bursts of a burst's
// nanoseconds per ID ("ns/id:p"), so that a time slice stolen from one
// burst moves no figure, and the median nanoseconds of a burst's first
// call, after the pause ("first-ns:p").
func BenchmarkGenerateBurst(b *testing.B) {
	const burst = 200
	ps := peers(b)
	perID := make([][]float64, len(ps)) // ns per ID of each burst
	first := make([][]float64, len(ps))
	rounds := 0
	for b.Loop() {
		for k := range ps {
			i := (k + rounds) % len(ps) // each round starts with the next peer
			p := ps[i]
			time.Sleep(10 * time.Millisecond)
			t0 := time.Now()
			p.burst(1)
			t1 := time.Now()
			p.burst(burst - 1)
			perID[i] = append(perID[i], float64(time.Since(t0).Nanoseconds())/burst)
			first[i] = append(first[i], float64(t1.Sub(t0).Nanoseconds()))
		}
		rounds++
	}
	for i, p := range ps {
		b.ReportMetric(medianOf(perID[i]), "ns/id:"+p.name)
		b.ReportMetric(medianOf(first[i]), "first-ns:"+p.name)
	}
}

// medianOf returns the median of v, which it sorts.
func medianOf(v []float64) float64 {
	slices.Sort(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

func BenchmarkParse(b *testing.B) {
	for _, p := range peers(b) {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkErr = p.parse(p.text)
			}
		})
	}
}

func BenchmarkString(b *testing.B) {
	for _, p := range peers(b) {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkStr = p.format()
			}
		})
	}
}

func BenchmarkAppend(b *testing.B) {
	for _, p := range peers(b) {
		b.Run(p.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			for b.Loop() {
				sinkBytes = p.appendTo(buf[:0])
			}
		})
	}
}

func BenchmarkMarshalJSON(b *testing.B) {
	for _, p := range peers(b) {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkBytes, sinkErr = json.Marshal(p.jsonID)
			}
		})
	}
}

func BenchmarkUnmarshalJSON(b *testing.B) {
	for _, p := range peers(b) {
		in, err := json.Marshal(p.jsonID)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(p.name, func(b *testing.B) {
			dst := p.jsonPtr()
			b.ReportAllocs()
			for b.Loop() {
				sinkErr = json.Unmarshal(in, dst)
			}
		})
	}
}

// TestPeersRoundTrip checks that every peer's text, JSON and parse agree,
// so the benchmarks compare working code.
func TestPeersRoundTrip(t *testing.T) {
	for _, p := range peers(t) {
		if err := p.parse(p.text); err != nil {
			t.Errorf("%s: parse(%q): %v", p.name, p.text, err)
		}
		if got := p.format(); got != p.text {
			t.Errorf("%s: format = %q, want %q", p.name, got, p.text)
		}
		if got := string(p.appendTo([]byte("x"))); got != "x"+p.text {
			t.Errorf("%s: append = %q", p.name, got)
		}
		in, err := json.Marshal(p.jsonID)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if err := json.Unmarshal(in, p.jsonPtr()); err != nil {
			t.Errorf("%s: json %s: %v", p.name, in, err)
		}
		if p.generate() == nil {
			t.Errorf("%s: generate returned nil", p.name)
		}
	}
}
