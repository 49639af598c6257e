package main

import (
	"strings"
	"testing"
)

// TestDefaultsSection renders "Defaults made by PostgreSQL" from made-up
// rounds and checks its table and its goals' verdicts.
func TestDefaultsSection(t *testing.T) {
	r := results{}
	add := func(srv, method, def string, ns ...float64) {
		for _, v := range ns {
			name := "Defaults/" + srv + "/" + method + "/" + def
			r.add(name, "ns/row", v)
			r.add(name, "rows/s", 1e9/v)
			r.add(name, "wal-B/row", 90)
			r.add(name, "pk-bytes", 21<<20)
		}
	}
	for _, srv := range []string{"pg15", "pg18"} {
		add(srv, "copy", "bigserial", 1000, 1100, 1200)
		add(srv, "copy", "ulid_flake_next", 1050, 1100, 1150) // 0.96–1.05× the time: met
		add(srv, "copy", "ulid_flake", 1500, 1700, 1600)
		add(srv, "insert-select", "bigserial", 1000, 1000, 1000)
		add(srv, "insert-select", "ulid_flake_next", 1000, 1200, 900) // 0.83–1.11× the rate: within noise
		add(srv, "insert-select", "ulid_flake", 2000, 2000, 2000)     // 0.5×: missed
	}
	add("pg18", "copy", "uuidv7", 1600, 1650, 1700)
	add("pg18", "insert-select", "uuidv7", 1000, 1000, 1000)
	saved := *reps
	*reps = 3
	defer func() { *reps = saved }()
	p := &report{r: r, defRows: 50_000}
	p.defaults()
	md := p.b.String()
	for _, want := range []string{
		"## Defaults made by PostgreSQL",
		"### pg15, 50k rows a load", "### pg18, 50k rows a load",
		"| COPY | `bigint DEFAULT ulid_flake_next(nextval('ulid_flake_seq'))` (C extension) | 1.10 µs (1.05 µs–1.15 µs) | 1.00× (0.96–1.05) | within noise | 0.67× (0.66–0.68) | faster |",
		"| INSERT … SELECT | `bigint DEFAULT ulid_flake()` (plain SQL) | 2.00 µs (2.00 µs–2.00 µs) | 2.00× (2.00–2.00) | slower |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(strings.Split(md, "### pg18")[0], "uuidv7()` |") {
		t.Errorf("pg15's table has a uuidv7() column:\n%s", md)
	}
	verdicts := map[string]verdict{}
	for _, g := range p.goals {
		verdicts[g.what] = g.verdict
	}
	for what, want := range map[string]verdict{
		"pg15: `DEFAULT ulid_flake_next(nextval(…))` (C extension) under COPY at least 0.9× bigserial's rate (50k rows, in rotation)":            met,
		"pg15: `DEFAULT ulid_flake_next(nextval(…))` (C extension) under INSERT … SELECT at least 0.9× bigserial's rate (50k rows, in rotation)": noise,
		"pg18: `DEFAULT ulid_flake_next(nextval(…))` (C extension) under COPY ahead of `DEFAULT uuidv7()` (50k rows, in rotation)":               met,
		"pg18: `DEFAULT ulid_flake()` (plain SQL) under COPY ahead of `DEFAULT uuidv7()` (50k rows, in rotation)":                                noise,
		"pg18: `DEFAULT ulid_flake()` (plain SQL) under INSERT … SELECT ahead of `DEFAULT uuidv7()` (50k rows, in rotation)":                     missed,
	} {
		if got, ok := verdicts[what]; !ok || got != want {
			t.Errorf("goal %q: %v (present %v), want %v", what, got, ok, want)
		}
	}
	if n := len(p.goals); n != 2*2+2*2 {
		t.Errorf("%d goals, want 8 (2 per server and load, 2 more per load on pg18)", n)
	}
}
