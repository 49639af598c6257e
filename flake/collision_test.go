package flake_test

import (
	"math"
	"testing"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

// TestCollisionFigure backs the figure README.md, docs/spec.md and
// docs/deployments.md give: a millisecond's first ID draws 19 random bits
// (its randomness is below 2^19), so among n processes' first IDs of one
// millisecond two are equal with p = 1 - prod(1 - i/2^19), which is 0.5 at
// about 850 processes.
func TestCollisionFigure(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 10000 {
		g, err := flake.NewGenerator(flake.WithClock(func() time.Time { return at }))
		if err != nil {
			t.Fatal(err)
		}
		id, err := g.New()
		if err != nil {
			t.Fatal(err)
		}
		if r := id.Randomness(); r >= 1<<19 {
			t.Fatalf("a first ID's randomness %d is not below 2^19", r)
		}
	}
	p := func(n int) float64 {
		none := 1.0
		for i := range n {
			none *= 1 - float64(i)/(1<<19)
		}
		return 1 - none
	}
	if got := p(850); math.Abs(got-0.5) > 0.01 {
		t.Fatalf("p(850) = %.3f, not about 0.5", got)
	}
	if p(800) >= 0.5 || p(900) <= 0.5 {
		t.Fatalf("p = 0.5 is not between 800 and 900 processes: p(800) = %.3f, p(900) = %.3f", p(800), p(900))
	}
}
