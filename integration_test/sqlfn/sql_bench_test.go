package sqlfn_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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

// BenchmarkSQLCopyDefault measures COPY FROM of 100k rows whose key is the
// column DEFAULT, against a bigserial peer in the same run, and against
// nextval() made volatile (the same arithmetic cost as bigserial, but COPY
// falls back from batched to row-by-row inserts, as it does for any default
// with a volatile function other than nextval, clock_timestamp() included).
// It reports ns per row ("ns/row").
func BenchmarkSQLCopyDefault(b *testing.B) {
	const rows = 100_000
	ctx := context.Background()
	src := make([][]any, rows)
	for i := range src {
		src[i] = []any{int32(i)}
	}
	for _, s := range pgtest.Servers(b) {
		db := s.NewDB(b)
		_, err := db.Exec(ctx, `CREATE SEQUENCE bench_seq;
			CREATE UNLOGGED TABLE copy_bigserial (id bigserial PRIMARY KEY, v int);
			CREATE UNLOGGED TABLE copy_volatile (id bigint PRIMARY KEY DEFAULT nextval('bench_seq') + (random() * 0)::bigint, v int);
			CREATE UNLOGGED TABLE copy_flake (id bigint PRIMARY KEY DEFAULT ulid_flake(), v int);
			CREATE UNLOGGED TABLE copy_scalable (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable(1), v int)`)
		if err != nil {
			b.Fatal(err)
		}
		for _, table := range []string{"copy_bigserial", "copy_volatile", "copy_flake", "copy_scalable"} {
			b.Run(fmt.Sprintf("%s/%s", s.Name, table), func(b *testing.B) {
				var elapsed time.Duration
				for b.Loop() {
					if _, err := db.Exec(ctx, `TRUNCATE `+table); err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					if _, err := db.CopyFrom(ctx, pgx.Identifier{table}, []string{"v"}, pgx.CopyFromRows(src)); err != nil {
						b.Fatal(err)
					}
					elapsed += time.Since(start)
				}
				b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*rows), "ns/row")
			})
		}
	}
}
