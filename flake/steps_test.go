package flake

import (
	"errors"
	"fmt"
	"testing"
)

// The steps' randomness is uniform and serially independent: a χ² test
// over 255 equal bins of the step range (255 divides 2^(8n)-1 for every n),
// and over 15×15 bins of consecutive steps, each failing by chance with a
// probability below 10^-6. A step rule that favoured some
// steps (a draw of 8 bits folded onto 255 values makes a step of 1 twice
// as likely as any other), or a source that served one draw to two steps,
// fails them.
const (
	stepBins      = 255
	stepBinsLimit = 380 // χ² with 254 degrees of freedom: P(> 376) ≈ 10^-6
	pairBins      = 15  // per step: 15·15 = 225 bins of consecutive pairs
	pairBinsLimit = 345 // χ² with 224 degrees of freedom: P(> 340) ≈ 10^-6
	stepSamples   = 200 * stepBins
)

// TestCommonPathStepsUniform draws the steps of New's common case (the
// runtime's CSPRNG, entropy size 1, from one goroutine): the differences of
// consecutive IDs of one millisecond.
func TestCommonPathStepsUniform(t *testing.T) {
	g := mustGen(t)
	if !g.common {
		t.Fatal("the default clock and randomness do not take the common path")
	}
	var runs [][]uint64 // the steps of each millisecond
	var prev uint64
	for n := 0; n < stepSamples; {
		id, err := g.New()
		if errors.Is(err, ErrMonotonicOverflow) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if u := uint64(id); u>>RandomBits != prev>>RandomBits {
			runs = append(runs, nil)
		} else {
			runs[len(runs)-1] = append(runs[len(runs)-1], u-prev)
			n++
		}
		prev = uint64(id)
	}
	checkSteps(t, "New", runs, 255)
}

// TestStepRuleUniform draws the steps of the one step rule (Generator.step,
// which TestStepRuleEveryPath shows every path takes) with the runtime's
// CSPRNG, for entropy sizes 1..3.
func TestStepRuleUniform(t *testing.T) {
	const last = 1 << 40
	for n := 1; n <= 3; n++ {
		g := mustGen(t, WithEntropy(n))
		steps := make([]uint64, stepSamples)
		for i := range steps {
			id, _ := g.step(last, g.random()) // larger steps pass the top: ok is false, and the step is still the rule's
			steps[i] = id - last
		}
		checkSteps(t, fmt.Sprintf("entropy %d", n), [][]uint64{steps}, 1<<(8*n)-1)
	}
}

// checkSteps fails t unless every step is in [1, stepMax] and the steps
// pass the χ² tests: the steps, and pairs of consecutive steps within each
// run, in two tests of pairs that do not overlap (steps 0 and 1, 2 and 3, …;
// then 1 and 2, 3 and 4, …), so that a correlation between any two
// neighbours shows.
func checkSteps(t *testing.T, name string, runs [][]uint64, stepMax uint64) {
	t.Helper()
	bin := func(s uint64, bins uint64) int { return int((s - 1) / (stepMax / bins)) }
	single := make([]float64, stepBins)
	var pairs [2][pairBins * pairBins]float64
	for _, run := range runs {
		for i, s := range run {
			if s < 1 || s > stepMax {
				t.Fatalf("%s: a step of %d, not in [1, %d]", name, s, stepMax)
			}
			single[bin(s, stepBins)]++
			if i > 0 {
				pairs[i%2][bin(run[i-1], pairBins)*pairBins+bin(s, pairBins)]++
			}
		}
	}
	if x := chiSquare(single); x > stepBinsLimit {
		t.Errorf("%s: χ² of the steps over %d bins is %.0f (limit %d): not uniform", name, stepBins, x, stepBinsLimit)
	}
	for k := range pairs {
		if x := chiSquare(pairs[k][:]); x > pairBinsLimit {
			t.Errorf("%s: χ² of pairs of consecutive steps over %d bins is %.0f (limit %d): not independent", name, len(pairs[k]), x, pairBinsLimit)
		}
	}
}

// chiSquare is Pearson's statistic of counts against equal expectations.
func chiSquare(counts []float64) float64 {
	total := 0.0
	for _, c := range counts {
		total += c
	}
	want := total / float64(len(counts))
	x := 0.0
	for _, c := range counts {
		x += (c - want) * (c - want) / want
	}
	return x
}
