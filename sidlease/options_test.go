package sidlease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake/flake"
)

// Options out of their limits are refused with ErrInvalidOption before any
// statement runs (the pool below points nowhere).
func TestOptionsValidated(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, tc := range []struct {
		name string
		ns   string
		opts []Option
		want string
	}{
		{"validity too short", "ns", []Option{WithValidity(time.Millisecond)}, "WithValidity(1ms)"},
		{"validity too long", "ns", []Option{WithValidity(2 * time.Hour)}, "WithValidity(2h0m0s)"},
		{"negative validity", "ns", []Option{WithValidity(-time.Second)}, "WithValidity(-1s)"},
		{"no table", "ns", []Option{WithTable()}, "WithTable"},
		{"three parts", "ns", []Option{WithTable("a", "b", "c")}, "WithTable"},
		{"empty part", "ns", []Option{WithTable("", "t")}, "empty"},
		{"64 bytes", "ns", []Option{WithTable(strings.Repeat("x", 64))}, "64 bytes"},
		{"NUL in table", "ns", []Option{WithTable("a\x00b")}, "NUL"},
		{"NUL in namespace", "a\x00b", nil, "NUL"},
		{"bad UTF-8 namespace", "\xff", nil, "UTF-8"},
		{"bad generator option", "ns", []Option{WithGeneratorOptions(flake.WithMaxLead(0))}, "WithGeneratorOptions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Acquire(context.Background(), pool, tc.ns, tc.opts...)
			if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrInvalidOption naming %q", err, tc.want)
			}
		})
	}
	if _, err := Acquire(context.Background(), nil, "ns"); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("nil pool: %v", err)
	}
	if _, err := AcquireDB(context.Background(), nil, "ns"); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("nil *sql.DB: %v", err)
	}
	// The limits themselves are accepted (the error is then the server's).
	for _, v := range []time.Duration{MinValidity, MaxValidity, 18 * time.Minute} {
		if _, err := Acquire(context.Background(), pool, "ns", WithValidity(v), WithTable(strings.Repeat("x", 63))); errors.Is(err, ErrInvalidOption) {
			t.Fatalf("WithValidity(%s): %v", v, err)
		}
	}
}
