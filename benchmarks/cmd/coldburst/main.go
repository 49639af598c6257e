// Command coldburst makes bursts of IDs with ulidflake or snowflake, the
// caches evicted before each one as a pause lets other programs do, for a
// cache profiler to count what a burst after a pause reads from memory:
//
//	go build -o /tmp/coldburst ./cmd/coldburst
//	valgrind --tool=cachegrind --cache-sim=yes --LL=8388608,16,64 \
//	    --cachegrind-out-file=/tmp/cg.ulidflake /tmp/coldburst ulidflake
//	cg_annotate --threshold=0 --show=Ir,ILmr,DLmr,DLmw /tmp/cg.ulidflake
//
// Each of -bursts bursts makes 200 IDs, as BenchmarkGenerateBurst does,
// after writing -evict bytes (twice the last-level cache simulated above).
// cg_annotate then gives, for each function, the instructions run (Ir) and
// the last-level misses (ILmr, DLmr, DLmw): divide by the IDs, or by the
// bursts. Under valgrind the bursts are more than 100 ms apart, so each of
// ulidflake's also reads the wall clock again (see flake.Generator), which
// the benchmark's do about every other time.
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/bwmarrin/snowflake"

	"github.com/ulidflake/ulidflake/flake"
)

func main() {
	bursts := flag.Int("bursts", 200, "bursts to make")
	evict := flag.Int("evict", 16<<20, "bytes written before each burst")
	flag.Parse()
	burst := map[string]func() (last int64, errs int){"ulidflake": flakeBurst(), "bwmarrin-snowflake": snowBurst()}[flag.Arg(0)]
	if burst == nil {
		log.Fatalf("usage: coldburst [flags] ulidflake|bwmarrin-snowflake")
	}
	buf := make([]byte, *evict)
	var last int64
	errs := 0
	for i := range *bursts {
		for j := range buf {
			buf[j] = byte(i)
		}
		id, n := burst()
		last, errs = id, errs+n
	}
	fmt.Printf("%s: %d bursts of 200 IDs, %d errors, last ID %d\n", flag.Arg(0), *bursts, errs, last)
}

// flakeBurst makes 200 IDs with ulidflake's default generator settings.
func flakeBurst() func() (last int64, errs int) {
	g, err := flake.NewGenerator()
	if err != nil {
		log.Fatal(err)
	}
	return func() (last int64, errs int) {
		for range 200 {
			id, err := g.New()
			last = int64(id)
			if err != nil {
				errs++
			}
		}
		return last, errs
	}
}

// snowBurst makes 200 IDs with snowflake's node 1.
func snowBurst() func() (last int64, errs int) {
	n, err := snowflake.NewNode(1)
	if err != nil {
		log.Fatal(err)
	}
	return func() (last int64, errs int) {
		for range 200 {
			last = n.Generate().Int64()
		}
		return last, 0
	}
}
