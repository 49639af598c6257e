// Package copyrounds runs the interleaved COPY comparisons of the
// benchmarks: two tables whose keys two defaults make, loaded in turn.
package copyrounds

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Run runs reps repetitions; each COPYs rows rows into each of the two
// tables (column v, the key left to its default), each on its own
// connection, as sub-benchmarks named by the table, the second table
// first every other time. The tables are emptied before each COPY. Each
// reports its time per row ("ns/row").
func Run(b *testing.B, reps, rows int, tables [2]string, conns map[string]*pgx.Conn) {
	ctx := context.Background()
	for rep := range reps {
		order := tables
		if rep%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, table := range order {
			conn := conns[table]
			b.Run(table, func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					if _, err := conn.Exec(ctx, `TRUNCATE `+table); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if _, err := conn.CopyFrom(ctx, pgx.Identifier{table}, []string{"v"},
						pgx.CopyFromSlice(rows, func(i int) ([]any, error) { return []any{int32(i)}, nil })); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
			})
		}
	}
}
