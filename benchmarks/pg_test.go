package benchmarks

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/pgxtype"
)

func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }

var (
	insertRows   = flag.Int("rows", 10_000_000, "rows per table in BenchmarkInsert")
	insertSteps  = flag.Int("steps", 10, "BenchmarkInsert measures the rate and the index size after every rows/steps rows")
	rotationRows = flag.Int("rotation-rows", 1_000_000, "rows per load in BenchmarkInsertRotation")
	rotationReps = flag.Int("reps", 3, "rounds of BenchmarkInsertRotation: each loads every scheme once")
)

// scheme is a primary-key scheme of BenchmarkInsert.
type scheme struct {
	name    string
	ddl     string // CREATE TABLE t (...)
	load    func(ctx context.Context, conn *pgx.Conn, n int) error
	pkIndex string
	minPG   int // the oldest server_version_num that has it, 0 for all
}

// copyRows copies n rows made by row into t.
func copyRows(ctx context.Context, conn *pgx.Conn, cols []string, n int, row func(i int) []any) error {
	_, err := conn.CopyFrom(ctx, pgx.Identifier{"t"}, cols, pgx.CopyFromSlice(n, func(i int) ([]any, error) { return row(i), nil }))
	return err
}

func schemes() []scheme {
	gen, _ := ulidflake.NewGenerator()
	ctx := context.Background()
	newID := func() ulidflake.ID { id, _ := gen.NewWait(ctx); return id }
	return []scheme{
		{"bigserial", `CREATE TABLE t (id bigserial PRIMARY KEY, v int NOT NULL)`,
			func(ctx context.Context, c *pgx.Conn, n int) error {
				return copyRows(ctx, c, []string{"v"}, n, func(i int) []any { return []any{int32(i)} })
			}, "t_pkey", 0},
		{"ulidflake-app-copy", `CREATE TABLE t (id bigint PRIMARY KEY, v int NOT NULL)`,
			func(ctx context.Context, c *pgx.Conn, n int) error {
				return copyRows(ctx, c, []string{"id", "v"}, n, func(i int) []any { return []any{newID(), int32(i)} })
			}, "t_pkey", 0},
		{"ulidflake-app-insert", `CREATE TABLE t (id bigint PRIMARY KEY, v int NOT NULL)`,
			func(ctx context.Context, c *pgx.Conn, n int) error {
				const batch = 10_000
				ids, vs := make([]ulidflake.ID, 0, batch), make([]int32, 0, batch)
				for i := 0; i < n; i++ {
					ids, vs = append(ids, newID()), append(vs, int32(i))
					if len(ids) == batch || i == n-1 {
						if _, err := c.Exec(ctx, `INSERT INTO t (id, v) SELECT * FROM unnest($1::bigint[], $2::int[])`, ids, vs); err != nil {
							return err
						}
						ids, vs = ids[:0], vs[:0]
					}
				}
				return nil
			}, "t_pkey", 0},
		{"ulidflake-default", `CREATE TABLE t (id bigint PRIMARY KEY DEFAULT ulid_flake(), v int NOT NULL)`,
			func(ctx context.Context, c *pgx.Conn, n int) error {
				return copyRows(ctx, c, []string{"v"}, n, func(i int) []any { return []any{int32(i)} })
			}, "t_pkey", 0},
		{"uuidv4-default", `CREATE TABLE t (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), v int NOT NULL)`,
			func(ctx context.Context, c *pgx.Conn, n int) error {
				return copyRows(ctx, c, []string{"v"}, n, func(i int) []any { return []any{int32(i)} })
			}, "t_pkey", 0},
		{"uuidv7-app", `CREATE TABLE t (id uuid PRIMARY KEY, v int NOT NULL)`,
			func(ctx context.Context, c *pgx.Conn, n int) error {
				return copyRows(ctx, c, []string{"id", "v"}, n, func(i int) []any {
					u, _ := uuid.NewV7()
					return []any{[16]byte(u), int32(i)}
				})
			}, "t_pkey", 0},
		{"uuidv7-default", `CREATE TABLE t (id uuid PRIMARY KEY DEFAULT uuidv7(), v int NOT NULL)`,
			func(ctx context.Context, c *pgx.Conn, n int) error {
				return copyRows(ctx, c, []string{"v"}, n, func(i int) []any { return []any{int32(i)} })
			}, "t_pkey", 180000},
	}
}

// BenchmarkInsert loads -rows rows (default 10M) into a table keyed by each
// scheme, on each server, in -steps loads of equal size (default 10), and
// reports the rate and the primary-key index size after each load
// ("rows/s@k", "pk-bytes@k" for k = 1..steps), the whole load's rate, the
// index's leaf density (pgstattuple) and the WAL written per row. Run it
// with -benchtime 1x: one load is the measurement. It logs each server's
// shared_buffers, which the report marks on the index-size charts. It is
// one load per scheme and server, in a row: the report draws its growth
// curves, and quotes no ratio from it (BenchmarkInsertRotation's are).
func BenchmarkInsert(b *testing.B) {
	ctx := context.Background()
	for _, s := range pgtest.Servers(b) {
		db := s.NewDB(b)
		var versionNum int
		var sharedBuffers int64
		if err := db.QueryRow(ctx, `SELECT current_setting('server_version_num')::int,
			(SELECT setting::bigint * pg_size_bytes(unit) FROM pg_settings WHERE name = 'shared_buffers')`).Scan(&versionNum, &sharedBuffers); err != nil {
			b.Fatal(err)
		}
		b.Logf("server_setting %s shared_buffers %d", s.Name, sharedBuffers) // read by cmd/report
		for _, sc := range schemes() {
			if versionNum < sc.minPG {
				continue
			}
			b.Run(fmt.Sprintf("%s/%s", s.Name, sc.name), func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					load(ctx, b, s, sc, *insertRows, *insertSteps)
					b.StartTimer()
				}
			})
		}
	}
}

// BenchmarkInsertRotation is the key-scheme comparison whose ratios the
// report quotes: on each server, -reps rounds (default 3), each loading
// -rotation-rows rows (default 1M) into a fresh table for every scheme, one
// scheme after the other, each round starting one scheme further on, so
// that every scheme meets the machine's slow and fast moments alike. Each
// load is one sub-benchmark run ("pg18/bigserial", then "pg18/bigserial#01"
// and so on: round k is the k-th value of each name) with the metrics of
// BenchmarkInsert for one step. Run it with -benchtime 1x.
func BenchmarkInsertRotation(b *testing.B) {
	ctx := context.Background()
	for _, s := range pgtest.Servers(b) {
		var versionNum int
		db := s.NewDB(b)
		if err := db.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&versionNum); err != nil {
			b.Fatal(err)
		}
		var scs []scheme
		for _, sc := range schemes() {
			if versionNum >= sc.minPG {
				scs = append(scs, sc)
			}
		}
		for round := range *rotationReps {
			for k := range scs {
				sc := scs[(k+round)%len(scs)]
				b.Run(fmt.Sprintf("%s/%s", s.Name, sc.name), func(b *testing.B) {
					for b.Loop() {
						b.StopTimer()
						load(ctx, b, s, sc, *rotationRows, 1)
						b.StartTimer()
					}
				})
			}
		}
	}
}

// load makes a fresh database, loads it with rows rows of sc in steps
// loads, and reports the metrics of BenchmarkInsert.
func load(ctx context.Context, b *testing.B, s *pgtest.Server, sc scheme, rows, steps int) {
	db := s.NewDB(b)
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	pgxtype.Register(conn.TypeMap())
	if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pgstattuple; `+sc.ddl+`; CHECKPOINT`); err != nil {
		b.Fatal(err)
	}
	var lsn0 string
	if err := conn.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn0); err != nil {
		b.Fatal(err)
	}
	step := rows / steps
	var total time.Duration
	for k := 1; k <= steps; k++ {
		start := time.Now()
		if err := sc.load(ctx, conn, step); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		total += elapsed
		var size int64
		if err := conn.QueryRow(ctx, `SELECT pg_relation_size($1::regclass)`, sc.pkIndex).Scan(&size); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(step)/elapsed.Seconds(), fmt.Sprintf("rows/s@%d", k))
		b.ReportMetric(float64(size), fmt.Sprintf("pk-bytes@%d", k))
	}
	var wal int64
	var density float64
	if err := conn.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint, (pgstatindex($2)).avg_leaf_density`,
		lsn0, sc.pkIndex).Scan(&wal, &density); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(step*steps)/total.Seconds(), "rows/s")
	b.ReportMetric(density, "leaf-density-%")
	b.ReportMetric(float64(wal)/float64(step*steps), "wal-B/row")
}

// BenchmarkPgxScan1M reads a million bigint IDs through pgx: into int64,
// into ulidflake.ID with pgxtype.Register, and into ulidflake.ID through its
// sql.Scanner. It reports ns per row.
func BenchmarkPgxScan1M(b *testing.B) {
	const n = 1_000_000
	ctx := context.Background()
	for _, s := range pgtest.Servers(b) {
		db := s.NewDB(b)
		var version string
		if err := db.QueryRow(ctx, `SELECT version()`).Scan(&version); err != nil {
			b.Fatal(err)
		}
		b.Logf("server_version %s %s", s.Name, version) // read by cmd/report
		if _, err := db.Exec(ctx, `CREATE TABLE ids AS SELECT ulid_flake() AS id FROM generate_series(1, 1000000)`); err != nil {
			b.Fatal(err)
		}
		// Warm the server's cache, so that the first variant pays no more than the others.
		if _, err := db.Exec(ctx, `SELECT count(id) FROM ids`); err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name     string
			register bool
			scan     func(pgx.Rows) error
		}{
			{"int64", false, func(r pgx.Rows) error { var v int64; return r.Scan(&v) }},
			{"ID-Register", true, func(r pgx.Rows) error { var v ulidflake.ID; return r.Scan(&v) }},
			{"ID-Scanner", false, func(r pgx.Rows) error { var v ulidflake.ID; return r.Scan(&v) }},
		} {
			cfg, _ := pgxpool.ParseConfig(db.URL)
			if c.register {
				cfg.AfterConnect = pgxtype.AfterConnect
			}
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%s", s.Name, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					rows, err := pool.Query(ctx, `SELECT id FROM ids`)
					if err != nil {
						b.Fatal(err)
					}
					for rows.Next() {
						if err := c.scan(rows); err != nil {
							b.Fatal(err)
						}
					}
					if rows.Err() != nil {
						b.Fatal(rows.Err())
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			})
			pool.Close()
		}
	}
}
