package flake

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func TestEpoch(t *testing.T) {
	if DefaultEpoch().String() != "2024-01-01T00:00:00.000Z" || DefaultEpoch().UnixMilli() != 1704067200000 {
		t.Fatalf("DefaultEpoch = %s", DefaultEpoch())
	}
	if DefaultEpoch() != (Epoch{}) {
		t.Fatal("the zero Epoch is not the default")
	}
	e, err := NewEpoch(time.Unix(0, 0))
	if err != nil || e.UnixMilli() != 0 || e == DefaultEpoch() {
		t.Fatalf("NewEpoch(1970) = %v, %v", e, err)
	}
	for _, bad := range []time.Time{time.Unix(0, 0).Add(-time.Millisecond), time.Date(9800, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if _, err := NewEpoch(bad); !errors.Is(err, ErrEpochRange) {
			t.Errorf("NewEpoch(%s) error = %v", bad, err)
		}
	}
	if got := DefaultEpoch().Time(MustParse("7ZZZZZZZZZZZZ")); got.Format(RFC3339Milli) != "2302-09-27T15:10:22.207Z" {
		t.Errorf("DefaultEpoch().Time(Max) = %s", got.Format(RFC3339Milli))
	}
}

// An ID made under a custom epoch reads its time through that epoch, the
// one the generator reports; its Time, MinID and MaxID agree with the
// generator's. (ID has no Time method and the package no MinID/MaxID: a
// time is always read through an explicit epoch.)
func TestCustomEpoch(t *testing.T) {
	epoch, err := NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 678e6, time.UTC)
	g := mustGen(t, WithEpoch(epoch), WithClock(func() time.Time { return at }))
	id, err := g.New()
	if err != nil {
		t.Fatal(err)
	}
	if !epoch.Time(id).Equal(at) {
		t.Fatalf("epoch.Time = %s, want %s", epoch.Time(id), at)
	}
	lo := epoch.MinID(at)
	hi := epoch.MaxID(at)
	if id < lo || id > hi {
		t.Fatalf("%s outside %s..%s", id, lo, hi)
	}
	if g.Epoch() != epoch || !g.Epoch().Time(id).Equal(at) {
		t.Fatalf("g.Epoch() = %s, want %s", g.Epoch(), epoch)
	}
	def := mustGen(t, WithClock(func() time.Time { return at }))
	did, _ := def.New()
	if def.Epoch() != DefaultEpoch() || !DefaultEpoch().Time(did).Equal(at) {
		t.Fatalf("default generator's ID reads %s, want %s", DefaultEpoch().Time(did), at)
	}
}

func TestBounds(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 891_234_567, time.UTC)
	e := DefaultEpoch()
	lo, hi := e.MinID(at), e.MaxID(at)
	ms := at.Truncate(time.Millisecond)
	if !e.Time(lo).Equal(ms) || !e.Time(hi).Equal(ms) || lo.Randomness() != 0 || hi.Randomness() != 1<<20-1 {
		t.Fatalf("bounds %s..%s", lo, hi)
	}
	// Every ID generated in the millisecond lies within the bounds; the
	// neighbours of the bounds do not.
	g := mustGen(t, WithClock(func() time.Time { return at }))
	for {
		id, err := g.New()
		if err != nil {
			break
		}
		if id < lo || id > hi {
			t.Fatalf("%s outside %s..%s", id, lo, hi)
		}
	}
	if e.Time(lo-1).Equal(ms) || e.Time(hi+1).Equal(ms) {
		t.Fatalf("bounds are not tight")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		ts := time.UnixMilli(defaultEpochUnixMilli + 1 + r.Int64N(MaxTimestamp-1))
		lo := e.MinID(ts)
		hi := e.MaxID(ts)
		if !e.Time(lo).Equal(ts) || !e.Time(hi).Equal(ts) || hi-lo != 1<<20-1 {
			t.Fatalf("bounds of %s: %s..%s", ts, lo, hi)
		}
	}
}

// Times outside the range clamp to its ends: before the epoch (and in its
// first millisecond, for MinID) the smallest ID, 1, never the unset zero
// ID; past the range the largest, Max. No error.
func TestBoundsClamp(t *testing.T) {
	custom, _ := NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, e := range []Epoch{DefaultEpoch(), custom} {
		start := time.UnixMilli(e.UnixMilli())
		end := e.Time(Max)
		for _, tc := range []struct {
			at     time.Time
			lo, hi ID
		}{
			{start.Add(-time.Millisecond), 1, 1},
			{time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), 1, 1},
			{start, 1, 1<<RandomBits - 1},
			{end, Max - (1<<RandomBits - 1), Max},
			{end.Add(time.Millisecond), Max, Max},
			{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), Max, Max},
		} {
			lo, hi := e.MinID(tc.at), e.MaxID(tc.at)
			if lo != tc.lo || hi != tc.hi {
				t.Errorf("epoch %s, %s: %d, %d; want %d, %d", e, tc.at, lo, hi, tc.lo, tc.hi)
			}
		}
		if _, err := e.Timestamp(start.Add(-time.Millisecond)); !errors.Is(err, ErrTimeRange) {
			t.Errorf("Timestamp before the epoch: %v", err)
		}
	}
}

// An out-of-range time names the fix: an earlier (or later) epoch, in Go
// and in PostgreSQL, chosen before the first ID.
func TestTimeRangeErrorNamesTheFix(t *testing.T) {
	custom, _ := NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	const fix = "for every generator of these IDs before the first is made " +
		"(WithEpoch in Go, migrations.WithEpoch in PostgreSQL; docs/sql.md, \"The epoch\")"
	for _, tc := range []struct {
		e    Epoch
		at   time.Time
		want string
	}{
		{DefaultEpoch(), time.Date(2023, 5, 1, 12, 0, 0, 0, time.UTC),
			"flake: time out of range: 2023-05-01T12:00:00.000Z is before the epoch, 2024-01-01T00:00:00.000Z; " +
				"for such times choose an earlier epoch " + fix},
		{custom, time.Date(2019, 12, 31, 23, 59, 59, 999e6, time.UTC),
			"flake: time out of range: 2019-12-31T23:59:59.999Z is before the epoch, 2020-01-01T00:00:00.000Z; " +
				"for such times choose an earlier epoch " + fix},
		{DefaultEpoch(), time.Date(2302, 9, 27, 15, 10, 22, 208e6, time.UTC),
			"flake: time out of range: 2302-09-27T15:10:22.208Z is after 2302-09-27T15:10:22.207Z, " +
				"the last millisecond IDs hold under the epoch 2024-01-01T00:00:00.000Z; for such times choose a later epoch " + fix},
	} {
		_, err := tc.e.Timestamp(tc.at)
		if !errors.Is(err, ErrTimeRange) || err.Error() != tc.want {
			t.Errorf("Timestamp(%s) = %v\nwant %s", tc.at, err, tc.want)
		}
		g := mustGen(t, WithEpoch(tc.e))
		if _, err := g.NewAt(tc.at); err == nil || err.Error() != tc.want {
			t.Errorf("NewAt(%s) = %v\nwant %s", tc.at, err, tc.want)
		}
	}
	// The edges are in range.
	for _, at := range []time.Time{time.UnixMilli(defaultEpochUnixMilli), DefaultEpoch().Time(Max)} {
		if _, err := DefaultEpoch().Timestamp(at); err != nil {
			t.Errorf("Timestamp(%s): %v", at, err)
		}
	}
}
