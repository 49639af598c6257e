package main

import "fmt"

// checkedArgs runs BenchmarkCheckedStart once: reps interleaved
// repetitions of its two variants.
func checkedArgs(reps int) []string {
	return []string{"test", "-run", "^$", "-bench", "^BenchmarkCheckedStart$", "-count", "1", "-benchtime", "2x",
		"-timeout", "1h", ".", "-args", "-checked-reps", fmt.Sprint(reps)}
}

// checkedCost writes "The server start's check" from
// BenchmarkCheckedStart (benchmarks/checked_test.go): ns per row of a
// COPY whose default is ulid_flake() against the same body without the
// comparison of the server start.
func (p *report) checkedCost() {
	const checked, unchecked = "CheckedStart/checked", "CheckedStart/unchecked"
	c, ok := p.r.stat(checked, "ns/row")
	u, ok2 := p.r.stat(unchecked, "ns/row")
	q, ok3 := p.r.ratio(checked, unchecked, "ns/row")
	if !ok || !ok2 || !ok3 {
		return
	}
	p.f("## The server start's check\n\n")
	p.f("What the first-ID check costs every other ID (`BenchmarkCheckedStart`, `benchmarks/checked_test.go`): a COPY of 1,000,000 rows into a table whose key defaults to `ulid_flake()`, ")
	p.f("whose body compares `pg_postmaster_start_time()` with the start its node was checked on before it makes the ID, and into one whose key defaults to the same body without the comparison. ")
	p.f("%d repetitions, interleaved; ns per row, median (min–max); the ratio is taken repetition by repetition.%s\n\n", q.n, p.aloneNote())
	ns := func(v float64) string { return fmt.Sprintf("%.0f ns", v) }
	p.f("| default | per row | over the body without the check |\n|---|---|---|\n")
	p.f("| body without the check | %s | 1 |\n", span(u, ns))
	p.f("| `ulid_flake()` | %s | %s |\n\n", span(c, ns), q.times())
	p.goals = append(p.goals, goal{"the check costs a COPY with `DEFAULT ulid_flake()` at most 5%", "checked over unchecked " + q.times(), against(q, 1.05, true), ""})
}
