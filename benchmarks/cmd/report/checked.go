package main

import "fmt"

// checkedArgs runs BenchmarkCheckedStart once: reps interleaved
// repetitions of its two variants.
func checkedArgs(reps int) []string {
	return []string{"test", "-run", "^$", "-bench", "^BenchmarkCheckedStart$", "-count", "1", "-benchtime", "2x",
		"-timeout", "1h", ".", "-args", "-checked-reps", fmt.Sprint(reps)}
}

// extCheckedArgs runs BenchmarkExtensionCheckedStart (./extension) once:
// reps interleaved repetitions of the C module as it is and as it was
// before issue #40.
func extCheckedArgs(reps int) []string {
	return []string{"test", "-run", "^$", "-bench", "^BenchmarkExtensionCheckedStart$", "-count", "1", "-benchtime", "2x",
		"-timeout", "1h", "./extension", "-args", "-ext-checked-reps", fmt.Sprint(reps)}
}

// measureChecked runs both benchmarks of "The server start's check".
func measureChecked(r results, versions map[string]string, n int) {
	run(r, versions, ".", checkedArgs(n)...)
	run(r, versions, ".", extCheckedArgs(n)...)
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
	p.extCheckedCost()
}

// extCheckedCost writes the C extension's part of "The server start's
// check" from BenchmarkExtensionCheckedStart (./extension): ns per row of
// a COPY whose default is ulid_flake_next(nextval(…)) of the module as it
// is against the module before issue #40.
func (p *report) extCheckedCost() {
	const checked, pre40 = "ExtensionCheckedStart/checked", "ExtensionCheckedStart/pre40"
	c, ok := p.r.stat(checked, "ns/row")
	o, ok2 := p.r.stat(pre40, "ns/row")
	q, ok3 := p.r.ratio(checked, pre40, "ns/row")
	if !ok || !ok2 || !ok3 {
		return
	}
	p.f("The C extension compares the start once per statement, when it reads the state, so a COPY pays it once (`BenchmarkExtensionCheckedStart`, `benchmarks/extension`): ")
	p.f("a COPY of 1,000,000 rows into a table whose key defaults to `ulid_flake_next(nextval('ulid_flake_seq'))` of the module as it is, and into one whose key defaults to the same function of the module before the check (commit 84ac12b, built beside it in the image by `extension/image/build.sh`), ")
	p.f("each on a connection of its own. %d repetitions, interleaved, on PostgreSQL 18.\n\n", q.n)
	ns := func(v float64) string { return fmt.Sprintf("%.0f ns", v) }
	p.f("| module | per row | over the module before the check |\n|---|---|---|\n")
	p.f("| before the check (84ac12b) | %s | 1 |\n", span(o, ns))
	p.f("| as it is | %s | %s |\n\n", span(c, ns), q.times())
	p.goals = append(p.goals, goal{"the check costs a COPY with the C extension's default at most 5%", "as it is over before the check " + q.times(), against(q, 1.05, true), ""})
}
