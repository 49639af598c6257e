package flake_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

// IDs made for a past time read that time, truncated to the millisecond;
// consecutive calls for one millisecond increase.
func TestNewAtTimeAndOrder(t *testing.T) {
	epoch, err := flake.NewEpoch(time.Date(2015, 3, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		epoch flake.Epoch
		opts  []flake.Option
		n     int // within the floor of IDs a millisecond holds
	}{
		{"default", flake.DefaultEpoch(), nil, flake.MinBurst},
		{"scalable", flake.DefaultEpoch(), []flake.Option{flake.WithSID(7)}, flake.ScalableMinBurst},
		{"custom epoch", epoch, []flake.Option{flake.WithEpoch(epoch)}, flake.MinBurst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := flake.NewGenerator(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			at := time.Date(2024, 6, 30, 23, 59, 59, 999_999_999, time.FixedZone("x", -7*3600))
			var prev flake.ID
			for i := range tc.n {
				id, err := g.NewAt(at)
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if got, want := tc.epoch.Time(id), at.Truncate(time.Millisecond).UTC(); !got.Equal(want) {
					t.Fatalf("call %d: time %s, want %s", i, got, want)
				}
				if id <= prev {
					t.Fatalf("call %d: %s after %s", i, id, prev)
				}
				if tc.name == "scalable" && id.SID() != 7 {
					t.Fatalf("SID %d, want 7", id.SID())
				}
				prev = id
			}
		})
	}
}

// NewAt never moves the live IDs' logical clock: New after a backfill in
// the past or the future follows the clock, and keeps increasing.
func TestNewAtLeavesLiveStateAlone(t *testing.T) {
	g, err := flake.NewGenerator()
	if err != nil {
		t.Fatal(err)
	}
	live, err := g.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{time.Now().Add(-24 * time.Hour), time.Now().Add(time.Hour)} {
		if _, err := g.NewAt(at); err != nil {
			t.Fatal(err)
		}
		next, err := g.New()
		if err != nil {
			t.Fatal(err)
		}
		if next <= live {
			t.Fatalf("New after NewAt(%s): %s, not after %s", at, next, live)
		}
		if d := time.Since(g.Epoch().Time(next)); d < -time.Second || d > time.Second {
			t.Fatalf("New after NewAt(%s) reads %s, not the clock", at, g.Epoch().Time(next))
		}
		live = next
	}
}

// A time outside the epoch's range is an error, never a clamped ID.
func TestNewAtRange(t *testing.T) {
	g, err := flake.NewGenerator()
	if err != nil {
		t.Fatal(err)
	}
	epoch := time.UnixMilli(flake.DefaultEpoch().UnixMilli())
	for _, at := range []time.Time{epoch.Add(-time.Millisecond), epoch.Add(time.Duration(flake.MaxTimestamp+1) * time.Millisecond), {}} {
		if id, err := g.NewAt(at); !errors.Is(err, flake.ErrTimeRange) {
			t.Errorf("NewAt(%s) = %s, %v; want ErrTimeRange", at, id, err)
		}
	}
	first, err := g.NewAt(epoch)
	if err != nil || first == 0 || first.Timestamp() != 0 {
		t.Fatalf("NewAt(epoch) = %d, %v", first, err)
	}
	last, err := g.NewAt(epoch.Add(time.Duration(flake.MaxTimestamp) * time.Millisecond))
	if err != nil || last.Timestamp() != flake.MaxTimestamp {
		t.Fatalf("NewAt(end of range) = %d, %v", last, err)
	}
}

// Concurrent callers for one millisecond get distinct IDs, each caller's
// increasing (run with -race).
func TestNewAtConcurrent(t *testing.T) {
	g, err := flake.NewGenerator()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 6e6, time.UTC)
	const workers, each = 4, flake.MinBurst / 4 // within the floor: no overflow
	ids := make([][]flake.ID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				id, err := g.NewAt(at)
				if err != nil {
					t.Error(err)
					return
				}
				ids[w] = append(ids[w], id)
			}
		})
	}
	wg.Wait()
	var all []flake.ID
	for w, got := range ids {
		if !slices.IsSorted(got) {
			t.Fatalf("worker %d: IDs not increasing", w)
		}
		all = append(all, got...)
	}
	slices.Sort(all)
	if n := len(slices.Compact(all)); n != workers*each {
		t.Fatalf("%d distinct IDs of %d", n, workers*each)
	}
}

// FuzzNewAt: any millisecond in range gives an ID of that millisecond,
// which survives the text form.
func FuzzNewAt(f *testing.F) {
	f.Add(int64(0))
	f.Add(int64(flake.MaxTimestamp))
	f.Add(int64(1_000_000_000))
	g, err := flake.NewGenerator()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, ms int64) {
		at := time.UnixMilli(flake.DefaultEpoch().UnixMilli() + ms)
		id, err := g.NewAt(at)
		if ms < 0 || ms > flake.MaxTimestamp {
			if !errors.Is(err, flake.ErrTimeRange) {
				t.Fatalf("NewAt(%d ms) = %v, want ErrTimeRange", ms, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		back, err := flake.Parse(id.String())
		if err != nil || back != id || id.Timestamp() != ms || !g.Epoch().Time(id).Equal(at) {
			t.Fatalf("NewAt(%d ms) = %s (%d ms), parsed %s, %v", ms, id, id.Timestamp(), back, err)
		}
	})
}

func ExampleGenerator_NewAt() {
	g, err := flake.NewGenerator()
	if err != nil {
		panic(err)
	}
	created := time.Date(2024, 7, 5, 5, 57, 45, 483e6, time.UTC) // an old row's time
	a, _ := g.NewAt(created)
	b, _ := g.NewAt(created)
	fmt.Println(g.Epoch().Time(a), a < b)
	// Output: 2024-07-05 05:57:45.483 +0000 UTC true
}
