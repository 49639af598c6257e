package pgxtype

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

func registered() *pgtype.Map {
	m := pgtype.NewMap()
	Register(m)
	return m
}

const sampleInt = 16873543940839584

var sampleBytes = []byte{0, 0x3b, 0xf2, 0x66, 0x18, 0xb2, 0x18, 0xa0}

func TestCodecPlans(t *testing.T) {
	m := registered()
	for _, v := range []any{flake.ID(sampleInt), sqltype.NullID{ID: sampleInt, Valid: true}} {
		buf, err := m.Encode(pgtype.Int8OID, pgtype.BinaryFormatCode, v, nil)
		if err != nil || string(buf) != string(sampleBytes) {
			t.Errorf("Encode(%#v) binary = %x, %v", v, buf, err)
		}
		buf, err = m.Encode(pgtype.Int8OID, pgtype.TextFormatCode, v, nil)
		if err != nil || string(buf) != "16873543940839584" {
			t.Errorf("Encode(%#v) text = %q, %v", v, buf, err)
		}
	}
	if buf, err := m.Encode(pgtype.Int8OID, pgtype.BinaryFormatCode, sqltype.NullID{}, nil); buf != nil || err != nil {
		t.Errorf("Encode(invalid NullID) = %x, %v; want NULL", buf, err)
	}
	var id flake.ID
	var n sqltype.NullID
	for _, target := range []any{&id, &n} {
		if err := m.Scan(pgtype.Int8OID, pgtype.BinaryFormatCode, sampleBytes, target); err != nil {
			t.Errorf("Scan binary into %T: %v", target, err)
		}
		if err := m.Scan(pgtype.Int8OID, pgtype.TextFormatCode, []byte("16873543940839584"), target); err != nil {
			t.Errorf("Scan text into %T: %v", target, err)
		}
	}
	if id != sampleInt || n != (sqltype.NullID{ID: sampleInt, Valid: true}) {
		t.Errorf("scanned %d %+v", id, n)
	}
	if err := m.Scan(pgtype.Int8OID, pgtype.BinaryFormatCode, []byte{1, 2}, &id); !errors.Is(err, flake.ErrLength) {
		t.Errorf("short int8: %v", err)
	}
	if err := m.Scan(pgtype.Int8OID, pgtype.TextFormatCode, []byte("12x"), &id); !errors.Is(err, flake.ErrCharacter) {
		t.Errorf("bad text: %v", err)
	}
	// Plain int64 still goes through pgx's own codec.
	var i int64
	if err := m.Scan(pgtype.Int8OID, pgtype.BinaryFormatCode, sampleBytes, &i); err != nil || i != sampleInt {
		t.Errorf("int64 = %d, %v", i, err)
	}
}

// Sinks for the benchmarks.
var (
	sinkBuf []byte
	sinkErr error
)

// BenchmarkScan scans one binary int8 value, as rows.Scan does with a
// cached plan: into an int64 (the baseline), into an ID with Register, and
// into an ID through its sql.Scanner without Register.
func BenchmarkScan(b *testing.B) {
	b.Run("int64", func(b *testing.B) {
		var v int64
		benchScan(b, pgtype.NewMap(), &v)
	})
	b.Run("ID/Register", func(b *testing.B) {
		var v flake.ID
		benchScan(b, registered(), &v)
	})
	b.Run("ID/Scanner", func(b *testing.B) {
		var v flake.ID
		benchScan(b, pgtype.NewMap(), &v)
	})
}

func benchScan(b *testing.B, m *pgtype.Map, target any) {
	plan := m.PlanScan(pgtype.Int8OID, pgtype.BinaryFormatCode, target)
	b.ReportAllocs()
	for b.Loop() {
		sinkErr = plan.Scan(sampleBytes, target)
	}
}

// BenchmarkEncode encodes one query argument as binary int8, the way pgx
// encodes parameters (memoised plan lookup, then encode).
func BenchmarkEncode(b *testing.B) {
	b.Run("int64", func(b *testing.B) { benchEncode(b, pgtype.NewMap(), any(int64(sampleInt))) })
	b.Run("ID/Register", func(b *testing.B) { benchEncode(b, registered(), any(flake.ID(sampleInt))) })
	b.Run("ID/Valuer", func(b *testing.B) { benchEncode(b, pgtype.NewMap(), any(flake.ID(sampleInt))) })
}

func benchEncode(b *testing.B, m *pgtype.Map, arg any) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		sinkBuf, sinkErr = m.Encode(pgtype.Int8OID, pgtype.BinaryFormatCode, arg, buf[:0])
	}
}

// TestRegisteredNoAllocations backs the promise that, with Register, an ID
// scans and encodes as binary int8 with no allocation, as an int64 does.
func TestRegisteredNoAllocations(t *testing.T) {
	m := registered()
	var id flake.ID
	scan := m.PlanScan(pgtype.Int8OID, pgtype.BinaryFormatCode, &id)
	buf := make([]byte, 0, 64)
	arg := any(flake.ID(sampleInt))
	allocs := testing.AllocsPerRun(100, func() {
		if err := scan.Scan(sampleBytes, &id); err != nil {
			t.Fatal(err)
		}
		b, err := m.Encode(pgtype.Int8OID, pgtype.BinaryFormatCode, arg, buf[:0])
		if err != nil || len(b) != 8 {
			t.Fatal(b, err)
		}
	})
	if allocs != 0 || id != sampleInt {
		t.Errorf("scan and encode: %v allocations, id %d", allocs, id)
	}
	// Without Register the Scanner path allocates: the test can tell.
	plain := pgtype.NewMap()
	scan = plain.PlanScan(pgtype.Int8OID, pgtype.BinaryFormatCode, &id)
	if allocs := testing.AllocsPerRun(100, func() { _ = scan.Scan(sampleBytes, &id) }); allocs == 0 {
		t.Errorf("the unregistered Scanner path allocated nothing: the check above proves nothing")
	}
}

// The plans leave zero, NULL and negative values to flake's one rule, in
// both formats, and their errors name flake once: a NULL scanned into an
// ID was "pgxtype: flake: NULL scanned ...".
func TestCodecRule(t *testing.T) {
	m := registered()
	const negative = "flake: integer out of range: -5 is negative"
	for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
		for _, tc := range []struct {
			arg  any
			want string // the bytes as text, or the error
			err  error
		}{
			{flake.ID(0), flake.ErrZeroID.Error(), flake.ErrZeroID},
			{flake.ID(-5), negative, flake.ErrRange},
			{flake.Max, "9223372036854775807", nil},
			{sqltype.NullID{}, "NULL", nil},
			{sqltype.NullID{ID: 7}, "NULL", nil},
			{sqltype.NullID{Valid: true}, "sqltype: NullID{Valid: true} holds the zero ID", flake.ErrZeroID},
			{sqltype.NullID{ID: -5, Valid: true}, negative, flake.ErrRange},
			{sqltype.NullID{ID: flake.Max, Valid: true}, "9223372036854775807", nil},
			{sqltype.Bound(0), "0", nil},
			{sqltype.Bound(-5), negative, flake.ErrRange},
			{sqltype.Bound(flake.Max), "9223372036854775807", nil},
		} {
			buf, err := m.Encode(pgtype.Int8OID, format, tc.arg, nil)
			got := "NULL"
			switch {
			case err != nil:
				got = err.Error()
			case buf != nil && format == pgtype.BinaryFormatCode:
				var v int64
				if err := m.Scan(pgtype.Int8OID, format, buf, &v); err != nil {
					t.Fatal(err)
				}
				got = strconv.FormatInt(v, 10)
			case buf != nil:
				got = string(buf)
			}
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) || !strings.Contains(got, tc.want) || strings.Count(got, "flake: ") > 1 {
				t.Errorf("format %d: Encode(%#v) = %s, %v; want %s", format, tc.arg, got, err, tc.want)
			}
		}
	}
	for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
		for _, tc := range []struct {
			v      []byte // nil: NULL
			id     string
			idErr  string
			nullID sqltype.NullID
		}{
			{nil, "", "flake: NULL scanned into a non-null ID (use NullID)", sqltype.NullID{}},
			{int8Bytes(format, 0), "0000000000000", "", sqltype.NullID{}},
			{int8Bytes(format, -5), "", negative, sqltype.NullID{ID: 1, Valid: true}},
			{int8Bytes(format, int64(flake.Max)), "7ZZZZZZZZZZZZ", "", sqltype.NullID{ID: flake.Max, Valid: true}},
		} {
			id := flake.ID(1)
			err := m.Scan(pgtype.Int8OID, format, tc.v, &id)
			if got := id.String(); err != nil {
				got = err.Error()
				if id != 1 {
					t.Errorf("format %d: failed Scan(%q) changed the ID to %d", format, tc.v, id)
				}
				if got != tc.idErr {
					t.Errorf("format %d: Scan(%q) into an ID: %s, want %s", format, tc.v, got, tc.idErr+tc.id)
				}
			} else if got != tc.id {
				t.Errorf("format %d: Scan(%q) into an ID: %s, want %s", format, tc.v, got, tc.idErr+tc.id)
			}
			n := sqltype.NullID{ID: 1, Valid: true}
			err = m.Scan(pgtype.Int8OID, format, tc.v, &n)
			if n != tc.nullID || (err != nil) != (tc.idErr == negative) {
				t.Errorf("format %d: Scan(%q) into a NullID: %+v, %v; want %+v", format, tc.v, n, err, tc.nullID)
			}
		}
	}
}

func int8Bytes(format int16, v int64) []byte {
	if format == pgtype.TextFormatCode {
		return strconv.AppendInt(nil, v, 10)
	}
	return binary.BigEndian.AppendUint64(nil, uint64(v))
}
