// Command testcost reports what a test run cost: the time of each test
// package and of each PostgreSQL version, the tests that passed, failed and
// skipped on each (and why they skipped), and the containers the harness
// started. It reads the output of go test -json on its standard input and
// exits with go test's verdict:
//
//	go test -json work | go run ./internal/pgtest/cmd/testcost
//	ULIDFLAKE_FULL=1 go test -race -json work | go run ./internal/pgtest/cmd/testcost
//
// The output of a test that failed, and of a package that failed without a
// failing test (a build error, a timeout), is printed whole, by package.
// A version's time adds up its subtests' times (pgNN), which overlap when
// they run in parallel: it is what the version costs, not wall time.
// Container starts are the Docker Engine's events for containers that carry
// the harness's label (org.ulidflake.pgtest), watched while the run lasts;
// without the docker CLI they are reported as unknown. The last line is
// "N passed, N failed, N skipped" (tests and subtests; a package that
// failed with no failing test counts as one failure). A package whose
// result came from go test's cache is marked: its tests did not run.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// tally counts tests by result.
type tally struct{ pass, fail, skip int }

func (c *tally) add(action string) {
	switch action {
	case "pass":
		c.pass++
	case "fail":
		c.fail++
	case "skip":
		c.skip++
	}
}

// pkgCost is what one test package cost.
type pkgCost struct {
	tally
	elapsed    float64
	result     string              // pass or fail
	cached     bool                // its result came from go test's cache
	perVersion map[string]float64  // seconds in subtests pgNN
	byVersion  map[string]*tally   // results of tests under pgNN
	output     map[string][]string // each test's output, "" the package's
	failed     []string            // the tests that failed, in order
	skips      map[string]int      // skips by message
}

// versionCost is what one server version cost across packages.
type versionCost struct {
	tally
	elapsed float64
}

var versionElem = regexp.MustCompile(`^pg[0-9]+$`)

func main() {
	starts := watchStarts()
	start := time.Now()
	pkgs, err := read(os.Stdin)
	wall := time.Since(start)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testcost:", err)
		os.Exit(2)
	}
	failures(os.Stdout, pkgs)
	totals := report(os.Stdout, pkgs, wall)
	fmt.Println(starts())
	fmt.Printf("%d passed, %d failed, %d skipped\n", totals.pass, totals.fail, totals.skip)
	if totals.fail > 0 {
		os.Exit(1)
	}
}

// read consumes go test -json.
func read(r io.Reader) (map[string]*pkgCost, error) {
	pkgs := map[string]*pkgCost{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Package == "" {
			fmt.Println(sc.Text()) // build errors and the like
			continue
		}
		p := pkgs[e.Package]
		if p == nil {
			p = &pkgCost{perVersion: map[string]float64{}, byVersion: map[string]*tally{}, output: map[string][]string{}, skips: map[string]int{}}
			pkgs[e.Package] = p
		}
		p.record(e)
	}
	return pkgs, sc.Err()
}

// record adds one event to the package's cost.
func (p *pkgCost) record(e event) {
	switch e.Action {
	case "output":
		p.output[e.Test] = append(p.output[e.Test], e.Output)
		if e.Test == "" && strings.HasPrefix(e.Output, "ok") && strings.Contains(e.Output, "\t(cached)") {
			p.cached = true
		}
		return
	case "pass", "fail", "skip":
	default:
		return
	}
	if e.Test == "" {
		p.elapsed, p.result = e.Elapsed, e.Action
		return
	}
	p.add(e.Action)
	if v := versionOf(e.Test); v != "" {
		if p.byVersion[v] == nil {
			p.byVersion[v] = &tally{}
		}
		p.byVersion[v].add(e.Action)
	}
	switch e.Action {
	case "fail":
		p.failed = append(p.failed, e.Test)
	case "skip":
		p.skips[skipReason(p.output[e.Test])]++
	}
	if v := e.Test[strings.LastIndex(e.Test, "/")+1:]; versionElem.MatchString(v) {
		p.perVersion[v] += e.Elapsed
	}
	if e.Action == "pass" {
		delete(p.output, e.Test)
	}
}

// skipReason is the message a skipped test gave: its last line of output
// that is not go test's own.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "===") {
			continue
		}
		if _, msg, ok := strings.Cut(l, ": "); ok && strings.Contains(l, ".go:") {
			return msg
		}
		return l
	}
	return "(no message)"
}

// failures prints, by package, the output of every test that failed and
// the package's own output.
func failures(w io.Writer, pkgs map[string]*pkgCost) {
	for _, name := range sortedNames(pkgs) {
		p := pkgs[name]
		if p.result != "fail" && len(p.failed) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n== FAIL %s\n", name)
		for _, t := range p.failed {
			io.WriteString(w, strings.Join(p.output[t], ""))
		}
		// The package's own output: a build error, a panic, or a race
		// report, which the runtime prints outside any test.
		io.WriteString(w, strings.Join(p.output[""], ""))
	}
}

// versionOf returns the server version a test runs on (its pgNN element),
// or "".
func versionOf(test string) string {
	for _, el := range strings.Split(test, "/") {
		if versionElem.MatchString(el) {
			return el
		}
	}
	return ""
}

func sortedNames(pkgs map[string]*pkgCost) []string {
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// report prints the tables and returns the run's totals.
func report(w io.Writer, pkgs map[string]*pkgCost, wall time.Duration) tally {
	var totals tally
	var sum float64
	versions := map[string]*versionCost{}
	var names []string
	cached := 0
	for _, n := range sortedNames(pkgs) {
		p := pkgs[n]
		totals.pass, totals.skip, totals.fail = totals.pass+p.pass, totals.skip+p.skip, totals.fail+p.fail
		if p.result == "fail" && p.fail == 0 {
			totals.fail++
		}
		if p.pass+p.fail+p.skip == 0 && p.result != "fail" {
			continue
		}
		names = append(names, n)
		if p.cached {
			cached++
		}
		sum += p.elapsed
		for v, c := range p.byVersion {
			if versions[v] == nil {
				versions[v] = &versionCost{}
			}
			vc := versions[v]
			vc.elapsed += p.perVersion[v]
			vc.pass, vc.fail, vc.skip = vc.pass+c.pass, vc.fail+c.fail, vc.skip+c.skip
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return pkgs[names[i]].elapsed > pkgs[names[j]].elapsed })
	vnames := make([]string, 0, len(versions))
	for v := range versions {
		vnames = append(vnames, v)
	}
	sort.Strings(vnames)

	fmt.Fprintf(w, "\n== test cost: %s wall, %.0f s of package time\n", wall.Round(time.Second), sum)
	if cached > 0 {
		fmt.Fprintf(w, "%d packages (marked *) from go test's cache: their tests did not run; their times are the cached run's (-count=1 runs them)\n", cached)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "package\ttime (s)\tpass\tfail\tskip\t"
	for _, v := range vnames {
		head += v + " (s)\t"
	}
	fmt.Fprintln(tw, head)
	for _, n := range names {
		p := pkgs[n]
		name := strings.TrimPrefix(n, "github.com/ulidflake/ulidflake/")
		if p.cached {
			name += " *"
		}
		row := fmt.Sprintf("%s\t%.1f\t%d\t%d\t%d\t", name, p.elapsed, p.pass, p.fail, p.skip)
		for _, v := range vnames {
			row += fmt.Sprintf("%.1f\t", p.perVersion[v])
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n== per PostgreSQL version: tests and subtests under pgNN; time is the sum of the pgNN subtests' times\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "version\ttime (s)\tpassed\tfailed\tskipped\t\n")
	for _, v := range vnames {
		c := versions[v]
		fmt.Fprintf(tw, "%s\t%.1f\t%d\t%d\t%d\t\n", v, c.elapsed, c.pass, c.fail, c.skip)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n== skipped tests and subtests, by reason\n")
	for _, n := range names {
		for reason, k := range pkgs[n].skips {
			fmt.Fprintf(w, "%4d  %s: %s\n", k, strings.TrimPrefix(n, "github.com/ulidflake/ulidflake/"), reason)
		}
	}
	return totals
}

// watchStarts watches the Docker Engine's container starts of the
// harness's containers until the function it returns is called, which
// reports them.
func watchStarts() func() string {
	cmd := exec.Command("docker", "events", "--filter", "type=container", "--filter", "event=start",
		"--filter", "label=org.ulidflake.pgtest=1", "--format", "{{.From}}")
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		return func() string { return "\n== container starts: unknown (" + err.Error() + ")" }
	}
	byImage := map[string]int{}
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			byImage[strings.TrimSpace(sc.Text())]++
		}
		close(done)
	}()
	return func() string {
		time.Sleep(time.Second) // events of the last moments
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
		total := 0
		var parts []string
		for img, n := range byImage {
			parts = append(parts, fmt.Sprintf("%s %d", img, n))
			total += n
		}
		sort.Strings(parts)
		return fmt.Sprintf("\n== container starts of the harness: %d (%s)", total, strings.Join(parts, ", "))
	}
}
