package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// blocksImage is the server of BenchmarkBlocksCost: the first of
// ULIDFLAKE_PG_IMAGES, or PostgreSQL 18.
func blocksImage() string {
	if s, _, _ := strings.Cut(os.Getenv("ULIDFLAKE_PG_IMAGES"), ","); s != "" {
		return s
	}
	return "18"
}

// blocksArgs runs BenchmarkBlocksCost once: reps interleaved repetitions
// of its three variants, each for benchtime.
func blocksArgs(benchtime string, reps int) []string {
	return []string{"test", "-run", "^$", "-bench", "^BenchmarkBlocksCost$", "-count", "1", "-benchtime", benchtime,
		"-timeout", "1h", ".", "-args", "-blocks-reps", strconv.Itoa(reps)}
}

// blockSources are BenchmarkBlocksCost's variants, the lease last.
var blockSources = []struct{ name, what string }{
	{"blocks-1024", "blocks of 1,024"},
	{"blocks-65536", "blocks of 65,536"},
	{"lease-scalable", "scalable layout, SID lease"},
}

// blocksCost writes "Blocks against a SID lease" from BenchmarkBlocksCost
// (benchmarks/blocks_test.go): IDs per second per instance and round
// trips per 1,000 IDs.
func (p *report) blocksCost() {
	lease := "BlocksCost/lease-scalable"
	base, ok := p.r.stat(lease, "ids/s")
	if !ok {
		return
	}
	p.f("## Blocks against a SID lease\n\n")
	p.f("One instance making IDs as fast as it can (`BenchmarkBlocksCost`, `benchmarks/blocks_test.go`): from `blocks.Source` with blocks of 1,024 (the default) and of 65,536, ")
	p.f("and from a `sidlease` lease (the scalable layout, `NewWait`), through pgx's stdlib on PostgreSQL %s (the harness's image, on the same machine). ", p.blocksServer())
	p.f("%d repetitions, interleaved (each runs the three in turn); median (min–max). \"Over the lease's\" is taken repetition by repetition. ", base.n)
	p.f("Round trips are the statements the instance's connections sent while it made IDs (a pgx tracer), the lease's claim left out.%s\n\n", p.aloneNote())
	p.f("| source | IDs per second per instance | over the lease's | against the lease | round trips per 1,000 IDs |\n|---|---|---|---|---|\n")
	for _, s := range blockSources {
		name := "BlocksCost/" + s.name
		rate, ok := p.r.stat(name, "ids/s")
		if !ok {
			continue
		}
		rt, _ := p.r.stat(name, "roundtrips/1000ids")
		q, claim, trips := "1", "–", span(rt, func(v float64) string { return fmt.Sprintf("%.3f", v) })
		if name != lease {
			r, _ := p.r.ratio(name, lease, "ids/s")
			q, claim = r.times(), compare(rate, base, true, "faster", "slower")
		} else {
			trips += " (renewals)"
		}
		p.f("| %s | %s | %s | %s | %s |\n", s.what, span(rate, thousands), q, claim, trips)
	}
	p.f("\nThe lease is held to the scalable layout's rate per SID (2^15 values a millisecond, spent in random steps: `NewWaitScalable` gives its sustained rate); ")
	p.f("blocks are held by how fast the database makes a block, which every instance of a node shares (fewer than 2^15 IDs a millisecond per node, as for `DEFAULT`), so their rate follows the server's CPU. ")
	p.f("The round trips of blocks are 1,000 / size, plus a reservation for each block dropped past its validity.\n\n")
}

// blocksServer names the server BenchmarkBlocksCost ran on: its version
// when another benchmark of the run logged it.
func (p *report) blocksServer() string {
	img := p.blocksImg
	if img == "" {
		img = blocksImage()
	}
	if v, ok := p.versions["pg"+img]; ok {
		return fmt.Sprintf("%s (%s)", img, v)
	}
	return img
}

// thousands formats a rate rounded to the thousand: "880,000".
func thousands(v float64) string {
	if v < 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	s := strconv.FormatInt(int64(v/1000+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s + ",000"
}
