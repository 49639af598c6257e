package benchmarks

import (
	"context"
	"database/sql"
	"flag"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// roundTrips counts the statements a pgx connection sends: one round
// trip each.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}

func (*roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// countedDB opens database/sql on url through pgx, counting round trips.
func countedDB(b *testing.B, url string) (*sql.DB, *roundTrips) {
	b.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		b.Fatal(err)
	}
	rt := &roundTrips{}
	cfg.Tracer = rt
	db := stdlib.OpenDB(*cfg)
	b.Cleanup(func() { db.Close() })
	return db, rt
}

var (
	blockSink  ulidflake.ID
	blocksReps = flag.Int("blocks-reps", 5, "repetitions of BenchmarkBlocksCost: each runs every variant once")
)

// source is what both sides make IDs with.
type source interface {
	NewWait(ctx context.Context) (ulidflake.ID, error)
}

// BenchmarkBlocksCost: one instance making IDs as fast as it can, from
// blocks of 1,024 (the default) and of 65,536, and with a SID lease
// (the scalable layout); ids/s per instance and round trips per 1,000
// IDs (setup and the lease's claim left out). Each
// repetition (-blocks-reps, default 5) runs the three in turn, so that
// they interleave.
func BenchmarkBlocksCost(b *testing.B) {
	db := pgtest.Servers(b)[0].NewDB(b)
	for range *blocksReps {
		for _, name := range []string{"blocks-1024", "blocks-65536", "lease-scalable"} {
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				sdb, rt := countedDB(b, db.URL)
				var src source
				switch name {
				case "lease-scalable":
					l, err := sidlease.AcquireDB(ctx, sdb, "bench-blocks")
					if err != nil {
						b.Fatal(err)
					}
					defer l.Close()
					src = l
				default:
					size := map[string]int{"blocks-1024": 1024, "blocks-65536": 65536}[name]
					s, err := blocks.NewSource(sdb, blocks.WithSize(size))
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					src = s
				}
				b.ReportAllocs()
				start := rt.n.Load()
				for b.Loop() {
					id, err := src.NewWait(ctx)
					if err != nil {
						b.Fatal(err)
					}
					blockSink = id
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
				b.ReportMetric(float64(rt.n.Load()-start)*1000/float64(b.N), "roundtrips/1000ids")
			})
		}
	}
}
