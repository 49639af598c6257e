package main

import "fmt"

// observerArgs runs BenchmarkObserver once, for benchtime.
func observerArgs(benchtime string) []string {
	return []string{"test", "-run", "^$", "-bench", "^BenchmarkObserver$", "-count", "1", "-benchtime", benchtime, "."}
}

// observer writes "Observer: the cost per New" from BenchmarkObserver
// (benchmarks/observer_test.go) and its goal: New's common path costs the
// same with an observer as without.
func (p *report) observer() {
	if !p.has("Observer/burst", "ns/New-median:none") {
		return
	}
	p.f("## Observer: the cost per `New`\n\n")
	p.f("Two stand-alone generators, one with a `flake.Observer` (a counter, as a metrics adapter's) and one without, called in interleaved rounds, each round starting with the other (`BenchmarkObserver`, `benchmarks/observer_test.go`). ")
	p.f("ns per `New`: the median round of each repetition, then the median (min–max) of those over the %d repetitions; \"with over without\" is taken repetition by repetition.%s\n\n", len(p.r["Observer/burst"]["ns/New-median:none"]), p.aloneNote())
	p.f("| loop | no observer | with an observer | with over without | against no observer | events per 1,000 calls |\n|---|---|---|---|---|---|\n")
	for _, l := range []struct{ name, what string }{
		{"burst", "burst: a 1 ms pause, then 1,000 calls (every call makes an ID: New's common path)"},
		{"saturated", "saturated: 20,000 calls in a row (most return `ErrMonotonicOverflow`, each an event)"},
	} {
		name := "Observer/" + l.name
		none, ok1 := p.r.stat(name, "ns/New-median:none")
		with, ok2 := p.r.stat(name, "ns/New-median:observer")
		q, ok3 := p.r.ratioUnits(name, "ns/New-median:observer", "ns/New-median:none")
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		ev, _ := p.m(name, "events/1000New")
		claim := compare(with, none, false, "faster", "slower")
		p.f("| %s | %s | %s | %s | %s | %.0f |\n", l.what, span(none, ns), span(with, ns), q.times(), claim, ev)
		if l.name == "burst" {
			v := met
			if claim == "slower" {
				v = missed
			}
			p.goals = append(p.goals, goal{"`New` costs the same with an observer as without (burst: New's common path)",
				fmt.Sprintf("with over without %s: %s", q.times(), claim), v,
				"the observer's nil check is on New's common path"})
		}
	}
	p.f("\nThe burst loop is what an observer costs `New`: no event happens on its common path. ")
	p.f("The saturated loop is what the events cost where they are most frequent: each overflow calls the observer.\n\n")
}

// aloneNote says, for a section run alone (-only), when and where.
func (p *report) aloneNote() string {
	if p.alone == "" {
		return ""
	}
	return " " + p.alone
}
