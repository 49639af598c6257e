package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// keyDefaults are the key schemes of BenchmarkDefaults (in ./extension),
// bigserial, the baseline, first; the names match that package.
var keyDefaults = []struct{ name, what string }{
	{"bigserial", "`bigserial`"},
	{"ulid_flake", "`bigint DEFAULT ulid_flake()` (plain SQL)"},
	{"ulid_flake_v6", "`bigint DEFAULT ulid_flake()` of migration version 6 (plain SQL)"},
	{"ulid_flake_next", "`bigint DEFAULT ulid_flake_next(nextval('ulid_flake_seq'))` (C extension)"},
	{"uuidv7", "`uuid DEFAULT uuidv7()`"},
}

// loadMethods are BenchmarkDefaults' ways to load, by name.
var loadMethods = []struct{ name, what string }{
	{"copy", "COPY"},
	{"insert-select", "INSERT … SELECT"},
}

// defaultServers returns the servers BenchmarkDefaults ran on.
func (p *report) defaultServers() []string {
	var s []string
	for name := range p.r {
		if f := strings.Split(name, "/"); len(f) == 4 && f[0] == "Defaults" && !slices.Contains(s, f[1]) {
			s = append(s, f[1])
		}
	}
	sort.Strings(s)
	return s
}

// defaultRows returns the rows of one load of BenchmarkDefaults.
func (p *report) defaultRows() int {
	if p.defRows == 0 {
		return 1_000_000
	}
	return p.defRows
}

// defaults writes "Defaults made by PostgreSQL": BenchmarkDefaults, the
// keys made by a column default (bigserial, ulid_flake(), the C
// extension's ulid_flake_next(nextval(…)), uuidv7()) under COPY and
// INSERT … SELECT, and its goals.
func (p *report) defaults() {
	srvs := p.defaultServers()
	if len(srvs) == 0 {
		return
	}
	rows := rowCount(p.defaultRows())
	p.f("## Defaults made by PostgreSQL\n\n")
	p.f("The key is left to the column's default: `bigserial` (the baseline); `DEFAULT ulid_flake()`, the plain-SQL functions that `migrations.Migrate` installs, which run anywhere, managed PostgreSQL included; ")
	p.f("the same `ulid_flake()` as migration version 6 made it (installed beside, in a schema of its own), which read the setting `ulid_flake.epoch_ms` and checked it through a domain on every row, where version 7 has the epoch as a constant fixed at install; ")
	p.f("`DEFAULT ulid_flake_next(nextval('ulid_flake_seq'))`, the optional C extension `ulid_flake_ext` in the form [docs/extension.md](docs/extension.md) gives; and on PostgreSQL 18 its own `DEFAULT uuidv7()`. ")
	p.f("A table `(id <key> PRIMARY KEY, v int)`, logged, in a fresh database, after a `CHECKPOINT`, is loaded with %s rows, the key column left out, ", rows)
	p.f("by `COPY t (v) FROM STDIN` (pgx's binary `CopyFrom`) and by `INSERT INTO t (v) SELECT g FROM generate_series(1, n) g` (`BenchmarkDefaults`, in `benchmarks/extension`). ")
	p.f("%d rounds: in each, every default is loaded once by each method, in rotation (each round starts one default further on, and the two methods alternate which goes first). ", *reps)
	p.f("The servers run `localhost/ulidflake/postgres-ext:N`: the images above with the extension installed (`extension/image`).\n\n")
	p.f("\"vs bigserial\" is the load's time over bigserial's in the same round, median (min–max) over the rounds: a rate of at least 0.9× bigserial's is a time of at most %.2f× its. ", 1/0.9)
	p.f("\"against bigserial\" claims faster or slower only where the ranges of the two times do not overlap. WAL per row and the primary-key index are medians.\n\n")
	for _, s := range srvs {
		name := func(m, d string) string { return "Defaults/" + s + "/" + m + "/" + d }
		_, has18 := p.r.stat(name("copy", "uuidv7"), "ns/row")
		p.f("### %s, %s rows a load\n\n", s, rows)
		if has18 {
			p.f("| load | key | time per row, median (min–max) | vs bigserial | against bigserial | vs `uuidv7()` | against `uuidv7()` | WAL per row | PK index |\n|---|---|---|---|---|---|---|---|---|\n")
		} else {
			p.f("| load | key | time per row, median (min–max) | vs bigserial | against bigserial | WAL per row | PK index |\n|---|---|---|---|---|---|---|\n")
		}
		for _, m := range loadMethods {
			base, okb := p.r.stat(name(m.name, "bigserial"), "ns/row")
			v7, ok7 := p.r.stat(name(m.name, "uuidv7"), "ns/row")
			for _, d := range keyDefaults {
				n := name(m.name, d.name)
				t, ok := p.r.stat(n, "ns/row")
				if !ok {
					continue
				}
				vsBase, claimBase := "–", "–"
				if d.name != "bigserial" && okb {
					q, _ := p.q(n, name(m.name, "bigserial"), "ns/row")
					vsBase, claimBase = q.times(), compare(t, base, false, "faster", "slower")
				}
				wal, _ := p.m(n, "wal-B/row")
				z, _ := p.m(n, "pk-bytes")
				p.f("| %s | %s | %s | %s | %s", m.what, d.what, span(t, ns), vsBase, claimBase)
				if has18 {
					vs7, claim7 := "–", "–"
					if d.name != "uuidv7" && ok7 {
						q, _ := p.q(n, name(m.name, "uuidv7"), "ns/row")
						vs7, claim7 = q.times(), compare(t, v7, false, "faster", "slower")
					}
					p.f(" | %s | %s", vs7, claim7)
				}
				p.f(" | %.0f B | %s |\n", wal, mib(z))
			}
		}
		p.f("\n")
		p.defaultGoals(s, rows)
	}
	p.f("Under COPY, PostgreSQL batches the inserts unless a column default calls a volatile function other than `nextval()` (next section). ")
	p.f("`ulid_flake()` reads the clock, `clock_timestamp()`, and `uuidv7()` is volatile too, so COPY goes row by row for both; ")
	p.f("the extension's function is declared `STABLE` and its argument is `nextval()`, so COPY stays batched as for bigserial ([why that is safe](docs/extension.md#why-stable-with-a-nextval-argument-is-safe)). ")
	p.f("`INSERT … SELECT` inserts row by row whatever the default. The extension needs a server where you can install a C extension; managed PostgreSQL keeps `ulid_flake()`.\n\n")
}

// defaultGoals adds the goals of issue #25 for server s: under COPY (the
// goal) and INSERT … SELECT (reported alike), the extension's default at
// least 0.9× bigserial's rate, and on PostgreSQL 18 both ulidflake
// defaults ahead of uuidv7().
func (p *report) defaultGoals(s, rows string) {
	name := func(m, d string) string { return "Defaults/" + s + "/" + m + "/" + d }
	for _, m := range loadMethods {
		if q, ok := p.q(name(m.name, "ulid_flake_next"), name(m.name, "bigserial"), "rows/s"); ok {
			v := against(q, 0.9, false)
			why := map[string]string{
				"copy":          "the extension keeps COPY batched, as bigserial's nextval() does; what it adds per row is the C call: a clock read and integer arithmetic, on top of nextval()",
				"insert-select": "INSERT … SELECT evaluates every default row by row; the extension adds its C call (a clock read and integer arithmetic) to nextval() for every row",
			}[m.name]
			p.goals = append(p.goals, goal{
				fmt.Sprintf("%s: `DEFAULT ulid_flake_next(nextval(…))` (C extension) under %s at least 0.9× bigserial's rate (%s rows, in rotation)", s, m.what, rows),
				fmt.Sprintf("%s bigserial's rate", q.times()), v, defaultWhy(v, why)})
		}
		if q, ok := p.q(name(m.name, "ulid_flake"), name(m.name, "ulid_flake_v6"), "rows/s"); ok {
			v := against(q, 1, false)
			p.goals = append(p.goals, goal{
				fmt.Sprintf("%s: `DEFAULT ulid_flake()` (plain SQL) of version 7, the epoch a constant, ahead of version 6's under %s (%s rows, in rotation)", s, m.what, rows),
				fmt.Sprintf("%s version 6's rate", q.times()), v, defaultWhy(v,
					"the expression is one part of a row's cost: the epoch setting's lookup and its domain check, which version 7 drops, are small beside the insert itself")})
		}
		for _, d := range []struct{ name, what, why string }{
			{"ulid_flake_next", "`DEFAULT ulid_flake_next(nextval(…))` (C extension)", map[string]string{
				"copy":          "uuidv7() is volatile, so COPY inserts its rows one by one while the extension's stay batched; what the extension pays and uuidv7() does not is nextval() for every row (a sequence buffer lock, and WAL every 32 values)",
				"insert-select": "both run row by row: the extension's default calls nextval() (a sequence buffer lock, and WAL every 32 values) and reads the clock; uuidv7() reads the clock and draws random bits",
			}[m.name]},
			{"ulid_flake", "`DEFAULT ulid_flake()` (plain SQL)", "both are volatile, so " + m.what + " inserts row by row for both; uuidv7() is one C call, ulid_flake() an SQL expression evaluated for every row (nextval(), clock_timestamp(), the arithmetic and the range check of the clock), though its key is 8 bytes against 16"},
		} {
			q, ok := p.q(name(m.name, d.name), name(m.name, "uuidv7"), "rows/s")
			if !ok {
				continue
			}
			v := against(q, 1, false)
			p.goals = append(p.goals, goal{
				fmt.Sprintf("%s: %s under %s ahead of `DEFAULT uuidv7()` (%s rows, in rotation)", s, d.what, m.what, rows),
				fmt.Sprintf("%s uuidv7()'s rate", q.times()), v, defaultWhy(v, d.why)})
		}
	}
}

// defaultWhy is the reason a goal of defaultGoals is not met: why when it
// is missed, the noise when its range straddles the goal.
func defaultWhy(v verdict, why string) string {
	if v == noise {
		return "the ratio's range straddles the goal: the rounds on this shared machine vary by more than the difference"
	}
	return why
}
