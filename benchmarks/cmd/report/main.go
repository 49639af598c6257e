// Command report runs every ulidflake benchmark (against its peers, in pgx,
// and in PostgreSQL against bigserial and UUIDs), and writes BENCHMARKS.md
// and its charts from the results:
//
//	cd benchmarks && go run ./cmd/report            # about 63 minutes on 2 quiet cores
//	go run ./cmd/report -quick                     # about 14 minutes: checks the command, not figures
//	go run ./cmd/report -from ../docs/benchmarks/results.json   # the report again, from saved results
//	go run ./cmd/report -only burst                 # about 1 minute: bursts and the first call after a pause only, printed
//	go run ./cmd/report -only observer              # about 1 minute: New's cost with and without an observer, printed
//	go run ./cmd/report -only blocks                # about 1 minute: blocks against a SID lease, printed
//	go run ./cmd/report -only checked               # about 2 minutes: what the server start's check costs a COPY, plain SQL and C extension, printed
//
// Every comparison is repeated (-reps, at least 3) and interleaved: each
// repetition runs every benchmark once, so the k-th figure of two
// benchmarks comes from the same pass over the machine, and a ratio is
// taken repetition by repetition, then reported as its median and range.
// The key schemes are loaded in rotation (BenchmarkInsertRotation), and so
// are the keys PostgreSQL makes as column defaults, the C extension's
// included (BenchmarkDefaults in ./extension, on the servers of
// localhost/ulidflake/postgres-ext:N, which the harness builds). A claim
// ("faster", "smaller", a goal met or missed) is made only where the ranges
// do not overlap; otherwise the report says "within noise". The 10M-row
// growth curves are one load per scheme, and say so.
//
// PostgreSQL comes from the test harness, as for go test: PostgreSQL 15, 17
// and 18 by default, its images built on first use (ULIDFLAKE_PG_IMAGES
// narrows them).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

var (
	reps    = flag.Int("reps", 5, "interleaved repetitions of every comparison (at least 3)")
	rows    = flag.Int("rows", 10_000_000, "rows per table in the growth curves, loaded in 10 steps (one run)")
	defRows = flag.Int("default-rows", 1_000_000, "rows per load in \"Defaults made by PostgreSQL\" (BenchmarkDefaults in ./extension)")
	out     = flag.String("out", "../BENCHMARKS.md", "the report")
	charts  = flag.String("charts", "../docs/benchmarks", "where the PNG charts go")
	quick   = flag.Bool("quick", false, "short runs, to check the command itself (figures not for the report)")
	from    = flag.String("from", "", "render the report from a results.json of an earlier run instead of running")
	only    = flag.String("only", "", `run one section, -reps times, and print its figures and goals, writing nothing: "burst" (BenchmarkGenerateBurst), "observer" (BenchmarkObserver), "blocks" (BenchmarkBlocksCost), "checked" (BenchmarkCheckedStart)`)
)

// saved is what results.json keeps of a run, so that the report can be
// rendered again (-from) without running.
type saved struct {
	Results  results
	Versions map[string]string
	Started  time.Time
	Rows     int
	RotRows  int // rows of a load of BenchmarkInsertRotation
	DefRows  int // rows of a load of BenchmarkDefaults (./extension)
	Count    int // repetitions
	Quick    bool
	Machine  string
	// BlocksImage is the server of BenchmarkBlocksCost, as
	// ULIDFLAKE_PG_IMAGES names it.
	BlocksImage string
}

// results maps a benchmark name (without the -N suffix) and a unit to the
// values of its runs.
type results map[string]map[string][]float64

func (r results) add(name, unit string, v float64) {
	if r[name] == nil {
		r[name] = map[string][]float64{}
	}
	r[name][unit] = append(r[name][unit], v)
}

// median returns the median of name's unit, and whether there is one.
func (r results) median(name, unit string) (float64, bool) {
	v := slices.Clone(r[name][unit])
	if len(v) == 0 {
		return 0, false
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
}

var (
	benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:#\d+)?(?:-\d+)?\s+\d+\s+(.*)$`)
	version   = regexp.MustCompile(`server_version (\S+) (.*)$`)
	setting   = regexp.MustCompile(`server_setting (\S+) (\S+) (\S+)$`)
)

// run runs go test in dir with args, echoes its output, and parses it.
func run(r results, versions map[string]string, dir string, args ...string) {
	runEnv(nil, r, versions, dir, args...)
}

// runEnv is run with the variables env added to the environment.
func runEnv(env []string, r results, versions map[string]string, dir string, args ...string) {
	log.Printf("(in %s) %s go %s", dir, strings.Join(env, " "), strings.Join(args, " "))
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	var buf bytes.Buffer
	cmd.Stdout = &buf
	if err := cmd.Run(); err != nil {
		os.Stdout.Write(buf.Bytes())
		log.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := sc.Text()
		if m := version.FindStringSubmatch(line); m != nil {
			versions[m[1]] = m[2]
		}
		if m := setting.FindStringSubmatch(line); m != nil {
			versions[m[1]+":"+m[2]] = m[3]
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				r.add(strings.TrimPrefix(m[1], "Benchmark"), f[i+1], v)
			}
		}
	}
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	if _, err := os.Stat("go.mod"); err != nil {
		log.Fatal("run it from the benchmarks directory: cd benchmarks && go run ./cmd/report")
	}
	if *only != "" {
		section(*only)
		return
	}
	var sv saved
	if *from != "" {
		b, err := os.ReadFile(*from)
		if err == nil {
			err = json.Unmarshal(b, &sv)
		}
		if err != nil {
			log.Fatalf("reading %s: %v", *from, err)
		}
	} else {
		sv = measure()
	}
	*reps, *rows, *quick = sv.Count, sv.Rows, sv.Quick
	r, versions, started := sv.Results, sv.Versions, sv.Started
	rep := report{r: r, versions: versions, started: started, rows: *rows, rotRows: sv.RotRows, defRows: sv.DefRows, quick: *quick, machine: sv.Machine,
		blocksImg: sv.BlocksImage}
	rep.libs = libVersions()
	if err := os.MkdirAll(*charts, 0o755); err != nil {
		log.Fatal(err)
	}
	if *from == "" {
		b, _ := json.MarshalIndent(sv, "", " ")
		if err := os.WriteFile(filepath.Join(*charts, "results.json"), b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	md := rep.markdown(*charts, *out)
	if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s and the charts in %s", *out, *charts)
}

// measure runs every benchmark and returns the results.
func measure() saved {
	n := max(*reps, 3)
	short := func(full string, q string) string {
		if *quick {
			return q
		}
		return full
	}
	r, versions := results{}, map[string]string{}
	started := time.Now()
	for rep := 1; rep <= n; rep++ {
		log.Printf("repetition %d of %d (%s so far)", rep, n, time.Since(started).Round(time.Second))
		run(r, versions, ".", "test", "-run", "^$", "-bench", "^Benchmark(Generate|GenerateParallel|Parse|String|Append|MarshalJSON|UnmarshalJSON|Prefixed(Parse|String|MarshalJSON|UnmarshalJSON))$",
			"-benchmem", "-count", "1", "-benchtime", short("1s", "50ms"), ".")
		run(r, versions, ".", burstArgs(short("100x", "10x"))...)
		run(r, versions, ".", observerArgs(short("1s", "100ms"))...)
		run(r, versions, "..", "test", "-run", "^$", "-bench", ".", "-benchmem", "-count", "1", "-benchtime", short("1s", "50ms"), "./flake", "./pgxtype")
		run(r, versions, ".", "test", "-run", "^$", "-bench", "^BenchmarkPgxScan1M$", "-benchmem", "-count", "1", "-benchtime", short("3x", "1x"), "-v", ".")
		run(r, versions, "..", "test", "-run", "^$", "-bench", "BenchmarkGormCreate|BenchmarkSQLGenerate|BenchmarkSQLCopyDefault", "-count", "1",
			"-benchtime", short("20x", "2x"), "./integration_test/gorm/", "./integration_test/sqlfn/")
	}
	log.Printf("the key schemes in rotation, %d rounds (%s so far)", n, time.Since(started).Round(time.Second))
	rotRows := short("1000000", "50000")
	run(r, versions, ".", "test", "-run", "^$", "-bench", "^BenchmarkInsertRotation$", "-count", "1", "-benchtime", "1x", "-v",
		"-timeout", "3h", ".", "-args", "-reps", strconv.Itoa(n), "-rotation-rows", rotRows)
	defRows := *defRows
	if *quick {
		defRows = 50_000
	}
	log.Printf("the defaults made by PostgreSQL, with the C extension, in rotation, %d rounds (%s so far)", n, time.Since(started).Round(time.Second))
	run(r, versions, ".", "test", "-run", "^$", "-bench", "^BenchmarkDefaults$", "-count", "1", "-benchtime", "1x", "-v",
		"-timeout", "3h", "./extension", "-args", "-reps", strconv.Itoa(n), "-rows", strconv.Itoa(defRows))
	log.Printf("blocks against a SID lease, %d rounds (%s so far)", n, time.Since(started).Round(time.Second))
	img := blocksImage()
	runEnv([]string{"ULIDFLAKE_PG_IMAGES=" + img}, r, versions, ".", blocksArgs(short("2s", "100ms"), n)...)
	log.Printf("the server start's check, %d rounds (%s so far)", n, time.Since(started).Round(time.Second))
	measureChecked(r, versions, n)
	rows := *rows
	if *quick {
		rows = 100_000
	}
	log.Printf("the growth curves, one load per scheme (%s so far)", time.Since(started).Round(time.Second))
	run(r, versions, ".", "test", "-run", "^$", "-bench", "^BenchmarkInsert$", "-count", "1", "-benchtime", "1x", "-v",
		"-timeout", "3h", ".", "-args", "-rows", strconv.Itoa(rows))
	took := time.Since(started).Round(time.Minute)
	log.Printf("measured in %s", took)
	rr, _ := strconv.Atoi(rotRows)
	return saved{Results: r, Versions: versions, Started: started, Rows: rows, RotRows: rr, DefRows: defRows, Count: n, Quick: *quick,
		Machine: fmt.Sprintf("%s, took %s", machine(), took), BlocksImage: img}
}

// burstArgs runs BenchmarkGenerateBurst once, for benchtime rounds.
func burstArgs(benchtime string) []string {
	return []string{"test", "-run", "^$", "-bench", "^BenchmarkGenerateBurst$", "-count", "1", "-benchtime", benchtime, "."}
}

// sections are the sections that run alone (-only): each runs its
// benchmarks n times, interleaved, and writes its figures and goals.
var sections = map[string]struct {
	measure func(r results, versions map[string]string, n int)
	write   func(p *report)
}{
	"burst":    {func(r results, v map[string]string, n int) { repeat(r, v, n, burstArgs("100x")) }, (*report).bursts},
	"observer": {func(r results, v map[string]string, n int) { repeat(r, v, n, observerArgs("1s")) }, (*report).observer},
	"blocks": {func(r results, v map[string]string, n int) {
		runEnv([]string{"ULIDFLAKE_PG_IMAGES=" + blocksImage()}, r, v, ".", blocksArgs("2s", n)...)
	}, (*report).blocksCost},
	"checked": {measureChecked, (*report).checkedCost},
}

// repeat runs go test with args n times in the benchmarks' directory.
func repeat(r results, versions map[string]string, n int, args []string) {
	for rep := 1; rep <= n; rep++ {
		log.Printf("repetition %d of %d", rep, n)
		run(r, versions, ".", args...)
	}
}

// section runs one section of the report alone, -reps times, and prints
// its figures and goals as the report would, writing nothing.
func section(name string) {
	s, ok := sections[name]
	if !ok {
		log.Fatalf("-only %q: the sections that run alone are \"burst\", \"observer\", \"blocks\" and \"checked\"", name)
	}
	r, versions := results{}, map[string]string{}
	n := max(*reps, 3)
	s.measure(r, versions, n)
	p := &report{r: r, versions: versions,
		alone: fmt.Sprintf("Run alone (`go run ./cmd/report -only %s`) on %s, %s.", name, time.Now().UTC().Format("2006-01-02"), machine())}
	s.write(p)
	if len(p.goals) > 0 {
		if !strings.HasSuffix(p.b.String(), "\n\n") {
			p.f("\n")
		}
		p.f("| goal | measured | |\n|---|---|---|\n")
		for _, g := range p.goals {
			p.f("| %s | %s | %s |\n", g.what, g.measured, g.verdict)
		}
	}
	fmt.Print(p.b.String())
}

// libVersions returns the versions of the peer libraries and drivers.
func libVersions() map[string]string {
	outp, err := exec.Command("go", "list", "-m", "-json", "all").Output()
	if err != nil {
		log.Fatal(err)
	}
	v := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(outp))
	for dec.More() {
		var m struct{ Path, Version string }
		if err := dec.Decode(&m); err != nil {
			log.Fatal(err)
		}
		v[m.Path] = m.Version
	}
	return v
}

// machine describes the machine for the report's header.
func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(string(b))
		if len(f) > 1 {
			kb, _ := strconv.ParseFloat(f[1], 64)
			mem = fmt.Sprintf(", %.0f GiB", kb/1024/1024)
		}
	}
	kernel := ""
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = ", Linux " + strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%s/%s, %d CPUs (%s)%s%s, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpu, mem, kernel, runtime.Version())
}

func chartPath(dir, out, name string) (file, link string) {
	file = filepath.Join(dir, name)
	link, err := filepath.Rel(filepath.Dir(out), file)
	if err != nil {
		link = file
	}
	return file, filepath.ToSlash(link)
}
