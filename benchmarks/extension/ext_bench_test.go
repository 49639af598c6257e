// Package extension benchmarks the C extension ulid_flake_ext's column
// default, ulid_flake_next(nextval('ulid_flake_seq')), beside bigserial,
// DEFAULT ulid_flake() and (PostgreSQL 18) DEFAULT uuidv7(). Its servers
// run localhost/ulidflake/postgres-ext:N (pgtest.MainExtension), built on
// demand from extension/.
package extension

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

func TestMain(m *testing.M) {
	pgtest.MainExtension(m, func(ctx context.Context, conn *pgx.Conn) error {
		if err := pgtest.Migrated(ctx, conn); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, `CREATE EXTENSION ulid_flake_ext`)
		return err
	}, "../../extension")
}

var (
	extRows = flag.Int("ext-rows", 100_000, "rows per load in BenchmarkExtensionDefault")
	extReps = flag.Int("ext-reps", 3, "rounds of BenchmarkExtensionDefault: each loads every default once")
)

// BenchmarkExtensionDefault loads -ext-rows rows (default 100k) into an
// unlogged table whose key is the column default, by COPY FROM and by
// INSERT … SELECT, for each default, in -ext-reps rounds (default 3); each
// round starts one default further on, so that every default meets the
// machine's slow and fast moments alike. Each load is one sub-benchmark
// run ("pg18/copy/bigserial", then "pg18/copy/bigserial#01" for round 2),
// reporting ns per row ("ns/row"). Run it with -benchtime 1x.
func BenchmarkExtensionDefault(b *testing.B) {
	ctx := context.Background()
	for _, s := range pgtest.Servers(b) {
		db := s.NewDB(b)
		defaults := []struct{ name, ddl string }{
			{"bigserial", "bigserial PRIMARY KEY"},
			{"ulid_flake", "bigint PRIMARY KEY DEFAULT ulid_flake()"},
			{"ulid_flake_next", "bigint PRIMARY KEY DEFAULT ulid_flake_next(nextval('ulid_flake_seq'))"},
		}
		if s.Major >= 18 {
			defaults = append(defaults, struct{ name, ddl string }{"uuidv7", "uuid PRIMARY KEY DEFAULT uuidv7()"})
		}
		for _, d := range defaults {
			if _, err := db.Exec(ctx, fmt.Sprintf(`CREATE UNLOGGED TABLE t_%s (id %s, v int NOT NULL)`, d.name, d.ddl)); err != nil {
				b.Fatal(err)
			}
		}
		src := make([][]any, *extRows)
		for i := range src {
			src[i] = []any{int32(i)}
		}
		loads := map[string]func(table string) error{
			"copy": func(table string) error {
				_, err := db.CopyFrom(ctx, pgx.Identifier{table}, []string{"v"}, pgx.CopyFromRows(src))
				return err
			},
			"insert-select": func(table string) error {
				_, err := db.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (v) SELECT g FROM generate_series(1, %d) g`, table, *extRows))
				return err
			},
		}
		for round := range *extReps {
			for _, how := range []string{"copy", "insert-select"} {
				for k := range defaults {
					d := defaults[(k+round)%len(defaults)]
					table := "t_" + d.name
					b.Run(fmt.Sprintf("%s/%s/%s", s.Name, how, d.name), func(b *testing.B) {
						var elapsed time.Duration
						for b.Loop() {
							if _, err := db.Exec(ctx, `TRUNCATE `+table+`; CHECKPOINT`); err != nil {
								b.Fatal(err)
							}
							start := time.Now()
							if err := loads[how](table); err != nil {
								b.Fatal(err)
							}
							elapsed += time.Since(start)
						}
						b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N**extRows), "ns/row")
					})
				}
			}
		}
	}
}
