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
	if got := MustParse("7ZZZZZZZZZZZZ").Time(); got.Format(RFC3339Milli) != "2302-09-27T15:10:22.207Z" {
		t.Errorf("Max.Time() = %s", got.Format(RFC3339Milli))
	}
}

// An ID made under a custom epoch reads its time through that epoch; the
// epoch's Time, MinID and MaxID agree with the generator's, and ID.Time
// is the default epoch's, which nothing can change.
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
	if id.Time().Equal(at) || !id.Time().Equal(DefaultEpoch().Time(id)) {
		t.Fatalf("ID.Time = %s: not the default epoch's reading", id.Time())
	}
	def := mustGen(t, WithClock(func() time.Time { return at }))
	did, _ := def.New()
	if !did.Time().Equal(at) {
		t.Fatalf("default generator's ID reads %s, want %s", did.Time(), at)
	}
}

func TestBounds(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 891_234_567, time.UTC)
	lo, hi := MinID(at), MaxID(at)
	ms := at.Truncate(time.Millisecond)
	if !lo.Time().Equal(ms) || !hi.Time().Equal(ms) || lo.Randomness() != 0 || hi.Randomness() != 1<<20-1 {
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
	if (lo - 1).Time().Equal(ms) || (hi + 1).Time().Equal(ms) {
		t.Fatalf("bounds are not tight")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		ts := time.UnixMilli(DefaultEpochUnixMilli + 1 + r.Int64N(MaxTimestamp-1))
		lo := MinID(ts)
		hi := MaxID(ts)
		if !lo.Time().Equal(ts) || !hi.Time().Equal(ts) || hi-lo != 1<<20-1 {
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
