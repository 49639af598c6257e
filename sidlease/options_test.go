package sidlease

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

// countingDB fails every statement and counts them.
type countingDB struct{ n atomic.Int64 }

type failedRow struct{}

func (failedRow) Scan(...any) error { return errors.New("no server") }

func (d *countingDB) queryRow(context.Context, string, ...any) interface{ Scan(...any) error } {
	d.n.Add(1)
	return failedRow{}
}

func (d *countingDB) exec(context.Context, string, ...any) (int64, error) {
	d.n.Add(1)
	return 0, errors.New("no server")
}

// maxOptionError bounds the text of an option's error: the sentinel, the
// option's name, at most maxQuoted bytes of the bad value it quotes, and
// the limit.
const maxOptionError = 400

// Every option, and the namespace, out of its limits is refused with
// flake.ErrOption before any statement runs, in an error that quotes at
// most a bounded prefix of the bad value, whatever its size.
func TestOptionsValidated(t *testing.T) {
	huge := strings.Repeat("n", 50<<20) // 50 MB
	future, err := flake.NewEpoch(time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ns   string
		opts []Option
		want string
	}{
		{"validity too short", "ns", []Option{WithValidity(time.Millisecond)}, "WithValidity(1ms)"},
		{"validity too long", "ns", []Option{WithValidity(2 * time.Hour)}, "WithValidity(2h0m0s)"},
		{"negative validity", "ns", []Option{WithValidity(-time.Second)}, "WithValidity(-1s)"},
		{"zero validity", "ns", []Option{WithValidity(0)}, "WithValidity(0s)"},
		{"huge validity", "ns", []Option{WithValidity(1<<63 - 1)}, "WithValidity"},
		{"empty schema", "ns", []Option{WithSchema("")}, "empty"},
		{"64 bytes", "ns", []Option{WithSchema(strings.Repeat("x", 64))}, "64 bytes"},
		{"huge schema", "ns", []Option{WithSchema(huge)}, "52428800 bytes"},
		{"NUL in schema", "ns", []Option{WithSchema("a\x00b")}, "NUL"},
		{"bad UTF-8 schema", "ns", []Option{WithSchema("s\xff")}, "UTF-8"},
		{"pg_temp", "ns", []Option{WithSchema("pg_temp")}, "temporary"},
		{"pg_temp_3", "ns", []Option{WithSchema("pg_temp_3")}, "temporary"},
		{"6 KB namespace", strings.Repeat("n", 6<<10), nil, "6144 bytes"},
		{"256-byte namespace", strings.Repeat("n", MaxNamespaceLen+1), nil, "256 bytes"},
		{"50 MB namespace", huge, nil, "52428800 bytes"},
		{"NUL in namespace", "a\x00b", nil, "NUL"},
		{"bad UTF-8 namespace", "\xff", nil, "UTF-8"},
		{"huge bad UTF-8 namespace", "\xff" + huge[:1000], nil, "1001 bytes"},
		{"nil option", "ns", []Option{nil}, "option 0 is nil"},
		{"nil generator option", "ns", []Option{WithGeneratorOptions(nil)}, "WithGeneratorOptions"},
		{"bad generator option", "ns", []Option{WithGeneratorOptions(flake.WithMaxLead(0))}, "WithGeneratorOptions"},
		{"bad entropy", "ns", []Option{WithGeneratorOptions(flake.WithEntropy(3))}, "WithGeneratorOptions"},
		{"epoch after the clock", "ns", []Option{WithGeneratorOptions(flake.WithEpoch(future))}, "WithGeneratorOptions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &countingDB{}
			_, err := acquire(context.Background(), d, tc.ns, tc.opts)
			if !errors.Is(err, flake.ErrOption) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %.500v, want flake.ErrOption naming %q", err, tc.want)
			}
			if n := len(err.Error()); n > maxOptionError {
				t.Fatalf("the error is %d bytes, more than %d: %.500s", n, maxOptionError, err)
			}
			if n := d.n.Load(); n != 0 {
				t.Fatalf("%d statements ran before the option was refused", n)
			}
		})
	}
	if _, err := Acquire(context.Background(), nil, "ns"); !errors.Is(err, flake.ErrOption) {
		t.Fatalf("nil pool: %v", err)
	}
	if _, err := AcquireDB(context.Background(), nil, "ns"); !errors.Is(err, flake.ErrOption) {
		t.Fatalf("nil *sql.DB: %v", err)
	}
	// The limits themselves are accepted: the first statement runs.
	for _, tc := range []struct {
		ns   string
		opts []Option
	}{
		{"ns", []Option{WithValidity(MinValidity)}},
		{"ns", []Option{WithValidity(MaxValidity)}},
		{"ns", []Option{WithValidity(18 * time.Minute)}},
		{"ns", []Option{WithSchema(strings.Repeat("s", 63))}},
		{"ns", []Option{WithSchema("pg_tempest")}},
		{strings.Repeat("é", MaxNamespaceLen/2), nil},
		{"", nil},
		{"ns", []Option{WithLogger(nil), WithGeneratorOptions()}},
	} {
		d := &countingDB{}
		if _, err := acquire(context.Background(), d, tc.ns, tc.opts); errors.Is(err, flake.ErrOption) || d.n.Load() == 0 {
			t.Fatalf("%.80q %d options: %v after %d statements", tc.ns, len(tc.opts), err, d.n.Load())
		}
	}
}

// recordingDB records the arguments of the first statement, and fails it.
type recordingDB struct {
	countingDB
	args []any
}

func (d *recordingDB) queryRow(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
	if d.args == nil {
		d.args = args
	}
	return d.countingDB.queryRow(ctx, q, args...)
}

// The lease table is public's by default and the named schema's with
// WithSchema, never found on the search_path: the first statement gets
// the schema's name as a parameter, and the bare name, to look an earlier
// release's table up, only by default.
func TestTableSchemaQualified(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		args []any
	}{
		{nil, []any{"public", `"ulid_flake_sid_leases"`}},
		{[]Option{WithSchema("public")}, []any{"public", nil}},
		{[]Option{WithSchema(`Odd "Name"`)}, []any{`Odd "Name"`, nil}},
	} {
		d := &recordingDB{}
		if _, err := acquire(context.Background(), d, "ns", tc.opts); err == nil {
			t.Fatal("no error from a failing database")
		}
		if !reflect.DeepEqual(d.args, tc.args) {
			t.Fatalf("got %q, want %q", d.args, tc.args)
		}
	}
}
