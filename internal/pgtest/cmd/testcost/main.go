// Command testcost reports what a test run cost: the time of each test
// package and of each PostgreSQL version, the tests that passed, failed and
// skipped on each, and the containers the run started. It reads the output
// of go test -json on its standard input, passes the tests' own output
// through, and exits with go test's verdict:
//
//	go test -json work | go run ./internal/pgtest/cmd/testcost
//	ULIDFLAKE_FULL=1 go test -race -json work | go run ./internal/pgtest/cmd/testcost
//
// Its last line is "N passed, N failed, N skipped" (every test and
// subtest). Container starts are counted from the Docker Engine's events
// during the run (the docker CLI); without it they are reported as unknown.
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
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// pkgCost is what one test package cost.
type pkgCost struct {
	tally
	elapsed     float64
	result      string             // pass or fail
	perVersion  map[string]float64 // seconds in subtests pgNN
	skipReasons map[string]int     // top-level skips, by message
	lastOutput  map[string]string  // each test's last line of its own output
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

// versionCost is what one server version cost across packages.
type versionCost struct {
	tally
	elapsed float64
}

var versionElem = regexp.MustCompile(`^pg[0-9]+$`)

func main() {
	start := time.Now()
	pkgs, versions, totals, err := read(os.Stdin, os.Stdout)
	end := time.Now()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testcost:", err)
		os.Exit(2)
	}
	report(os.Stdout, pkgs, versions, end.Sub(start))
	fmt.Println(containerStarts(start, end))
	fmt.Printf("%d passed, %d failed, %d skipped\n", totals.pass, totals.fail, totals.skip)
	for _, p := range pkgs {
		if p.result == "fail" {
			os.Exit(1)
		}
	}
	if totals.fail > 0 {
		os.Exit(1)
	}
}

// read consumes go test -json, writing the tests' output to out.
func read(r io.Reader, out io.Writer) (map[string]*pkgCost, map[string]*versionCost, tally, error) {
	pkgs := map[string]*pkgCost{}
	versions := map[string]*versionCost{}
	var totals tally
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(out, sc.Text()) // build errors and the like
			continue
		}
		p := pkgs[e.Package]
		if p == nil {
			p = &pkgCost{perVersion: map[string]float64{}, skipReasons: map[string]int{}, lastOutput: map[string]string{}}
			pkgs[e.Package] = p
		}
		switch e.Action {
		case "output":
			if e.Test == "" || strings.Contains(e.Output, "--- FAIL") || strings.HasPrefix(e.Output, "FAIL") {
				io.WriteString(out, e.Output)
			}
			if e.Test != "" && strings.Contains(e.Output, ".go:") && !strings.HasPrefix(strings.TrimSpace(e.Output), "---") {
				p.lastOutput[e.Test] = strings.TrimSpace(e.Output)
			}
			continue
		case "pass", "fail", "skip":
		default:
			continue
		}
		if e.Test == "" {
			p.elapsed, p.result = e.Elapsed, e.Action
			continue
		}
		v := versionOf(e.Test)
		vc := versions[v]
		if v != "" && vc == nil {
			vc = &versionCost{}
			versions[v] = vc
		}
		totals.add(e.Action)
		p.add(e.Action)
		if vc != nil {
			vc.add(e.Action)
			if last := e.Test[strings.LastIndex(e.Test, "/")+1:]; last == v {
				vc.elapsed += e.Elapsed
				p.perVersion[v] += e.Elapsed
			}
		}
		if e.Action == "skip" && !strings.Contains(e.Test, "/") {
			reason := p.lastOutput[e.Test]
			if i := strings.Index(reason, ": "); i >= 0 {
				reason = reason[i+2:]
			}
			p.skipReasons[reason]++
		}
	}
	return pkgs, versions, totals, sc.Err()
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

func report(w io.Writer, pkgs map[string]*pkgCost, versions map[string]*versionCost, wall time.Duration) {
	names := make([]string, 0, len(pkgs))
	var sum float64
	for n, p := range pkgs {
		if p.result != "" && (p.pass+p.fail+p.skip > 0 || p.result == "fail") {
			names = append(names, n)
			sum += p.elapsed
		}
	}
	sort.Slice(names, func(i, j int) bool { return pkgs[names[i]].elapsed > pkgs[names[j]].elapsed })
	var vnames []string
	for v := range versions {
		vnames = append(vnames, v)
	}
	sort.Strings(vnames)

	fmt.Fprintf(w, "\n== test cost: %s wall, %.0f s of package time\n", wall.Round(time.Second), sum)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "package\ttime (s)\tpass\tfail\tskip\t%s\t\n", strings.Join(vnames, " (s)\t")+suffix(vnames))
	for _, n := range names {
		p := pkgs[n]
		row := fmt.Sprintf("%s\t%.1f\t%d\t%d\t%d\t", strings.TrimPrefix(n, "github.com/ulidflake/ulidflake/"), p.elapsed, p.pass, p.fail, p.skip)
		for _, v := range vnames {
			row += fmt.Sprintf("%.1f\t", p.perVersion[v])
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n== per PostgreSQL version (subtests pgNN and below)\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "version\ttime (s)\tpassed\tfailed\tskipped\t\n")
	for _, v := range vnames {
		c := versions[v]
		fmt.Fprintf(tw, "%s\t%.1f\t%d\t%d\t%d\t\n", v, c.elapsed, c.pass, c.fail, c.skip)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n== skipped top-level tests, by reason\n")
	for _, n := range names {
		for reason, k := range pkgs[n].skipReasons {
			fmt.Fprintf(w, "%3d  %s: %s\n", k, strings.TrimPrefix(n, "github.com/ulidflake/ulidflake/"), reason)
		}
	}
}

func suffix(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return " (s)"
}

// containerStarts counts the containers the Docker Engine started between
// start and end, by image.
func containerStarts(start, end time.Time) string {
	out, err := exec.Command("docker", "events", "--since", start.Format(time.RFC3339Nano), "--until", end.Format(time.RFC3339Nano),
		"--filter", "type=container", "--filter", "event=start", "--format", "{{.From}}").Output()
	if err != nil {
		return "== container starts: unknown (" + err.Error() + ")"
	}
	byImage := map[string]int{}
	total := 0
	for _, img := range strings.Fields(string(out)) {
		byImage[img]++
		total++
	}
	var parts []string
	for img, n := range byImage {
		parts = append(parts, fmt.Sprintf("%s %d", img, n))
	}
	sort.Strings(parts)
	return fmt.Sprintf("\n== container starts: %d (%s)", total, strings.Join(parts, ", "))
}
