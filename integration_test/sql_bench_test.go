package integration_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// BenchmarkSQLGenerate measures the cost of one generated key inside
// PostgreSQL, next to nextval() in the same run: the bare call over
// generate_series, and an INSERT of 100k rows whose key is the column
// DEFAULT. It reports ns per generated ID ("ns/id").
func BenchmarkSQLGenerate(b *testing.B) {
	const rows = 100_000
	ctx := context.Background()
	for _, s := range pgtest.Servers(b) {
		db := s.NewDB(b)
		_, err := db.Exec(ctx, `CREATE SEQUENCE bench_seq;
			CREATE UNLOGGED TABLE bench_serial (id bigint PRIMARY KEY DEFAULT nextval('bench_seq'), v int);
			CREATE UNLOGGED TABLE bench_flake (id bigint PRIMARY KEY DEFAULT ulid_flake(), v int);
			CREATE UNLOGGED TABLE bench_scalable (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable(1), v int)`)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct{ name, call, table string }{
			{"nextval", "nextval('bench_seq')", "bench_serial"},
			{"ulid_flake", "ulid_flake()", "bench_flake"},
			{"ulid_flake_scalable", "ulid_flake_scalable(1)", "bench_scalable"},
		} {
			b.Run(fmt.Sprintf("%s/call/%s", s.Name, c.name), func(b *testing.B) {
				q := fmt.Sprintf(`SELECT count(%s) FROM generate_series(1, %d)`, c.call, rows)
				var elapsed time.Duration
				for b.Loop() {
					start := time.Now()
					if _, err := db.Exec(ctx, q); err != nil {
						b.Fatal(err)
					}
					elapsed += time.Since(start)
				}
				b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*rows), "ns/id")
			})
			b.Run(fmt.Sprintf("%s/insert/%s", s.Name, c.name), func(b *testing.B) {
				q := fmt.Sprintf(`INSERT INTO %s (v) SELECT g FROM generate_series(1, %d) g`, c.table, rows)
				var elapsed time.Duration
				for b.Loop() {
					if _, err := db.Exec(ctx, `TRUNCATE `+c.table); err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					if _, err := db.Exec(ctx, q); err != nil {
						b.Fatal(err)
					}
					elapsed += time.Since(start)
				}
				b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*rows), "ns/id")
			})
		}
	}
}
