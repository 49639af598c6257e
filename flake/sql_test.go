package flake

import (
	"database/sql/driver"
	"errors"
	"testing"
)

// fromColumn and columnValue (internal/bigint) are the one rule for zero, NULL and negative
// values; every scan and encode path of the module calls them.
func TestColumnRule(t *testing.T) {
	for _, tc := range []struct {
		v     int64
		null  bool
		id    ID
		valid bool
		err   error
	}{
		{0, true, 0, false, ErrNull},
		{5, true, 0, false, ErrNull},
		{-5, false, 0, false, ErrRange},
		{-1 << 63, false, 0, false, ErrRange},
		{0, false, 0, false, nil},
		{1, false, 1, true, nil},
		{int64(Max), false, Max, true, nil},
	} {
		id, valid, err := fromColumn(tc.v, tc.null)
		if id != tc.id || valid != tc.valid || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("fromColumn(%d, %v) = %d, %v, %v; want %d, %v, %v", tc.v, tc.null, id, valid, err, tc.id, tc.valid, tc.err)
		}
	}
	for _, tc := range []struct {
		id  ID
		v   int64
		err error
	}{
		{0, 0, ErrZeroID},
		{-5, 0, ErrRange},
		{1, 1, nil},
		{Max, int64(Max), nil},
	} {
		v, err := tc.id.columnValue()
		if v != tc.v || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("ID(%d).columnValue() = %d, %v; want %d, %v", tc.id, v, err, tc.v, tc.err)
		}
	}
}

// The errors of Value and Scan name the package once: they were
// "flake: scanning ID: flake: integer out of range: -5 is negative".
func TestSQLErrorMessages(t *testing.T) {
	var id ID
	for _, tc := range []struct {
		err  error
		want string
	}{
		{id.Scan(int64(-5)), "flake: integer out of range: -5 is negative"},
		{id.Scan(nil), "flake: NULL scanned into a non-null ID (use NullID)"},
		{id.Scan((*ID)(nil)), "flake: NULL scanned into a non-null ID (use NullID)"},
		{id.Scan("-5"), `flake: integer out of range: "-5" is negative`},
		{id.Scan("x"), `flake: invalid character: "x" has "x" at byte 0, not a decimal digit`},
		{id.Scan(1.5), "flake: cannot scan into an ID: float64 1.5 is not an int64 or a decimal integer"},
		{second(ID(-5).Value()), "flake: integer out of range: -5 is negative"},
		{second(ID(0).Value()), ErrZeroID.Error()},
		// A Valuer's own error, not ErrType: it was "flake: cannot scan
		// into an ID: flake.failingValuer {} is not an int64 or …".
		{id.Scan(failingValuer{}), ErrZeroID.Error()},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("error %q, want %q", tc.err, tc.want)
		}
	}
}

// failingValuer is a driver.Valuer that refuses, as sqltype's NullID
// {Valid: true, ID: 0} does.
type failingValuer struct{}

func (failingValuer) Value() (driver.Value, error) { return nil, ErrZeroID }

func second[T any](_ T, err error) error { return err }
