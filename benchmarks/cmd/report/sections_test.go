package main

import (
	"strings"
	"testing"
)

// The blocks section takes each source's rate over the lease's
// repetition by repetition, and claims faster only where the ranges of
// the rates do not overlap.
func TestBlocksCost(t *testing.T) {
	r := results{}
	for k, v := range [][3]float64{{800e3, 1200e3, 170e3}, {900e3, 700e3, 180e3}, {1000e3, 1300e3, 175e3}} {
		for i, s := range blockSources {
			r.add("BlocksCost/"+s.name, "ids/s", v[i])
			r.add("BlocksCost/"+s.name, "roundtrips/1000ids", float64(k))
		}
	}
	p := &report{r: r, versions: map[string]string{"pg18": "18.1"}, blocksImg: "18"}
	p.blocksCost()
	got := p.b.String()
	for _, want := range []string{
		"PostgreSQL 18 (18.1)",
		"| blocks of 1,024 | 900,000 (800,000–1,000,000) | 5.00× (4.71–5.71) | faster |",
		"| blocks of 65,536 | 1,200,000 (700,000–1,300,000) | 7.06× (3.89–7.43) | faster |",
		"| scalable layout, SID lease | 175,000 (170,000–180,000) | 1 | – | 1.000 (0.000–2.000) (renewals) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
}

// The observer's goal is missed only when New with an observer is slower
// than without over the whole range of the repetitions.
func TestObserverGoal(t *testing.T) {
	for _, c := range []struct {
		none, with []float64
		want       verdict
	}{
		{[]float64{33, 34, 35}, []float64{34, 35, 36}, met},
		{[]float64{33, 34, 35}, []float64{40, 41, 42}, missed},
	} {
		r := results{}
		for i := range c.none {
			r.add("Observer/burst", "ns/New-median:none", c.none[i])
			r.add("Observer/burst", "ns/New-median:observer", c.with[i])
		}
		p := &report{r: r}
		p.observer()
		if len(p.goals) != 1 || p.goals[0].verdict != c.want {
			t.Errorf("%v against %v: goals %+v, want one %v", c.with, c.none, p.goals, c.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for v, want := range map[float64]string{999: "999", 1499: "1,000", 880_400: "880,000", 1_199_600: "1,200,000"} {
		if got := thousands(v); got != want {
			t.Errorf("thousands(%v) = %q, want %q", v, got, want)
		}
	}
}

// The burst goal takes ulidflake's time per ID over snowflake's
// repetition by repetition: met only when every repetition is within 1.2×.
func TestBurstGoal(t *testing.T) {
	for _, c := range []struct {
		ulid, snow []float64
		want       verdict
	}{
		{[]float64{57, 60, 58}, []float64{55, 57, 56}, met},
		{[]float64{57, 70, 58}, []float64{55, 57, 56}, noise},
		{[]float64{70, 72, 71}, []float64{55, 57, 56}, missed},
	} {
		r := results{}
		for i := range c.ulid {
			for _, u := range []string{"ns/id:", "first-ns:"} {
				r.add("GenerateBurst", u+"ulidflake", c.ulid[i])
				r.add("GenerateBurst", u+"bwmarrin-snowflake", c.snow[i])
			}
		}
		p := &report{r: r}
		p.bursts()
		var got []goal
		for _, g := range p.goals {
			if strings.Contains(g.what, "within 1.2× snowflake's time per ID") {
				got = append(got, g)
			}
		}
		if len(got) != 1 || got[0].verdict != c.want {
			t.Errorf("%v over %v: goals %+v, want one %v", c.ulid, c.snow, got, c.want)
		}
	}
}

// The check's section takes the checked COPY's time over the unchecked
// one's repetition by repetition, and holds it to 1.05×.
func TestCheckedCost(t *testing.T) {
	r := results{}
	for _, v := range [][2]float64{{3000, 3030}, {3100, 3100}, {2900, 3016}} {
		r.add("CheckedStart/unchecked", "ns/row", v[0])
		r.add("CheckedStart/checked", "ns/row", v[1])
	}
	p := &report{r: r}
	p.checkedCost()
	got := p.b.String()
	for _, want := range []string{"| body without the check | 3000 ns (2900 ns–3100 ns) | 1 |", "| `ulid_flake()` | 3030 ns (3016 ns–3100 ns) | 1.01× (1.00–1.04) |"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if len(p.goals) != 1 || p.goals[0].verdict != met {
		t.Errorf("goals %+v, want the 5%% goal met", p.goals)
	}
}

// The extension's part compares the module as it is with the module
// before the check, and misses the goal when every repetition is over 5%.
func TestExtensionCheckedCost(t *testing.T) {
	r := results{}
	for _, v := range [][2]float64{{1000, 1100}, {1200, 1300}, {1100, 1200}} {
		r.add("CheckedStart/unchecked", "ns/row", 3000)
		r.add("CheckedStart/checked", "ns/row", 3000)
		r.add("ExtensionCheckedStart/pre40", "ns/row", v[0])
		r.add("ExtensionCheckedStart/checked", "ns/row", v[1])
	}
	p := &report{r: r}
	p.checkedCost()
	got := p.b.String()
	for _, want := range []string{"| before the check (84ac12b) | 1100 ns (1000 ns–1200 ns) | 1 |", "| as it is | 1200 ns (1100 ns–1300 ns) | 1.09× (1.08–1.10) |"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if len(p.goals) != 2 || p.goals[1].verdict != missed {
		t.Errorf("goals %+v, want the extension's 5%% goal missed", p.goals)
	}
}
