// Package extension benchmarks the keys PostgreSQL makes itself, as column
// defaults: bigserial, DEFAULT ulid_flake() (the plain-SQL functions of
// package migrations, and for comparison those of its version 4, which read the epoch setting at every call), the C extension ulid_flake_ext's
// DEFAULT ulid_flake_next(nextval('ulid_flake_seq')) and, on PostgreSQL 18,
// DEFAULT uuidv7(). Its servers run localhost/ulidflake/postgres-ext:N
// (pgtest.MainExtension), built on demand from extension/. cmd/report runs
// BenchmarkDefaults for BENCHMARKS.md's "Defaults made by PostgreSQL".
package extension

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

func TestMain(m *testing.M) {
	pgtest.MainExtension(m, func(ctx context.Context, conn *pgx.Conn) error {
		if err := pgtest.Migrated(ctx, conn); err != nil {
			return err
		}
		// Version 6 of the plain-SQL functions, beside the latest, for
		// comparison: its ulid_flake() read and checked the epoch setting
		// on every row.
		if _, err := conn.Exec(ctx, `CREATE SCHEMA ulid_flake_v6`); err != nil {
			return err
		}
		db := stdlib.OpenDB(*conn.Config())
		defer db.Close()
		if _, err := migrations.Migrate(ctx, db, migrations.WithSchema("ulid_flake_v6"), migrations.WithTarget(4)); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, `CREATE EXTENSION ulid_flake_ext`); err != nil {
			return err
		}
		return installPre40(ctx, conn)
	}, "../../extension")
}

// installPre40 installs, for BenchmarkExtensionCheckedStart, the C module
// as it was before issue #40 (ulid_flake_ext_pre40.so, when the image has
// it) as ulid_flake_pre40.ulid_flake_next, beside the migrations of its
// own schema, ulid_flake_pre40, whose state it reads. Its symbol is the
// one the extension's 1.2 script names.
func installPre40(ctx context.Context, conn *pgx.Conn) error {
	var present bool
	if err := conn.QueryRow(ctx, `SELECT (pg_stat_file(setting || '/ulid_flake_ext_pre40.so', true)).size IS NOT NULL
		FROM pg_config WHERE name = 'PKGLIBDIR'`).Scan(&present); err != nil || !present {
		return err
	}
	if _, err := conn.Exec(ctx, `CREATE SCHEMA ulid_flake_pre40`); err != nil {
		return err
	}
	db := stdlib.OpenDB(*conn.Config())
	defer db.Close()
	if _, err := migrations.Migrate(ctx, db, migrations.WithSchema("ulid_flake_pre40")); err != nil {
		return err
	}
	// CREATE FUNCTION loads the module, which defines the same setting as
	// ulid_flake_ext's: on a connection that has not loaded that one.
	fresh, err := pgx.ConnectConfig(ctx, conn.Config())
	if err != nil {
		return err
	}
	defer fresh.Close(ctx)
	_, err = fresh.Exec(ctx, `CREATE FUNCTION ulid_flake_pre40.ulid_flake_next(seq bigint) RETURNS bigint
		AS '$libdir/ulid_flake_ext_pre40', 'ulid_flake_next_1_2' LANGUAGE C STABLE STRICT PARALLEL SAFE`)
	return err
}

var (
	defaultRows = flag.Int("rows", 1_000_000, "rows per load in BenchmarkDefaults")
	defaultReps = flag.Int("reps", 3, "rounds of BenchmarkDefaults: each loads every default once by each method")
)

// keyDefault is a primary key whose value the server makes.
type keyDefault struct {
	name   string // as in the sub-benchmark's name, and read by cmd/report
	column string // the column's type, key and default
	minPG  int    // the oldest major version that has it, 0 for all
}

// keyDefaults are BenchmarkDefaults' key schemes, bigserial (the baseline)
// first. The extension's default is in the form docs/extension.md gives.
var keyDefaults = []keyDefault{
	{"bigserial", "bigserial PRIMARY KEY", 0},
	{"ulid_flake", "bigint PRIMARY KEY DEFAULT ulid_flake()", 0},
	{"ulid_flake_v6", "bigint PRIMARY KEY DEFAULT ulid_flake_v6.ulid_flake()", 0},
	{"ulid_flake_next", "bigint PRIMARY KEY DEFAULT ulid_flake_next(nextval('ulid_flake_seq'))", 0},
	{"uuidv7", "uuid PRIMARY KEY DEFAULT uuidv7()", 18},
}

// loadMethods are the ways BenchmarkDefaults loads n rows into t, the key
// column left out, so that its default makes it.
var loadMethods = []struct {
	name string
	load func(ctx context.Context, conn *pgx.Conn, n int) error
}{
	// COPY t (v) FROM STDIN, binary, the rows made by pgx as they are sent.
	{"copy", func(ctx context.Context, conn *pgx.Conn, n int) error {
		row := []any{int32(0)}
		i := 0
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"v"}, pgx.CopyFromFunc(func() ([]any, error) {
			if i == n {
				return nil, nil
			}
			i++
			row[0] = int32(i)
			return row, nil
		}))
		return err
	}},
	{"insert-select", func(ctx context.Context, conn *pgx.Conn, n int) error {
		_, err := conn.Exec(ctx, `INSERT INTO t (v) SELECT g FROM generate_series(1, $1::int) g`, n)
		return err
	}},
}

// BenchmarkDefaults loads -rows rows (default 1M) into a table
// (id <key default>, v int) of a fresh database, by COPY FROM STDIN and by
// INSERT … SELECT generate_series, the key made by each default of
// keyDefaults, on each server, after a CHECKPOINT. It runs -reps rounds
// (default 3); in each round every method loads every default once, the
// defaults in rotation (each round starts one default further on, and the
// methods alternate their order), so that every default meets the
// machine's slow and fast moments alike. Each load is one sub-benchmark run
// ("pg18/copy/bigserial", then "pg18/copy/bigserial#01" and so on: round k
// is the k-th value of each name) reporting the load's time per row
// ("ns/row"), its rate ("rows/s"), the WAL it wrote per row ("wal-B/row")
// and the primary-key index's size ("pk-bytes"). Run it with -benchtime 1x.
func BenchmarkDefaults(b *testing.B) {
	ctx := context.Background()
	for _, s := range pgtest.Servers(b) {
		var ds []keyDefault
		for _, d := range keyDefaults {
			if s.Major >= d.minPG {
				ds = append(ds, d)
			}
		}
		// A load by each method, not measured, so that the first measured
		// load of a server finds its caches as warm as the others do.
		for _, m := range loadMethods {
			loadDefault(ctx, b, s, ds[0], m.load, min(*defaultRows, 100_000))
		}
		for round := range *defaultReps {
			for j := range loadMethods {
				m := loadMethods[(j+round)%len(loadMethods)]
				for k := range ds {
					d := ds[(k+round)%len(ds)]
					b.Run(fmt.Sprintf("%s/%s/%s", s.Name, m.name, d.name), func(b *testing.B) {
						var l loaded
						for b.Loop() {
							b.StopTimer()
							l = loadDefault(ctx, b, s, d, m.load, *defaultRows)
							b.StartTimer()
						}
						b.ReportMetric(float64(l.elapsed.Nanoseconds())/float64(l.rows), "ns/row")
						b.ReportMetric(float64(l.rows)/l.elapsed.Seconds(), "rows/s")
						b.ReportMetric(float64(l.wal)/float64(l.rows), "wal-B/row")
						b.ReportMetric(float64(l.pkBytes), "pk-bytes")
					})
				}
			}
		}
	}
}

// loaded is what loadDefault measured of one load.
type loaded struct {
	rows    int
	elapsed time.Duration // of the load alone
	wal     int64         // bytes of WAL written from the checkpoint to the load's end
	pkBytes int64         // the primary-key index's size
}

// loadDefault makes a fresh database with the table of d, checkpoints, and
// loads rows rows with load.
func loadDefault(ctx context.Context, b *testing.B, s *pgtest.Server, d keyDefault,
	load func(context.Context, *pgx.Conn, int) error, rows int) loaded {
	db := s.NewDB(b)
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	// The database is a copy of the template, whose state the extension
	// refuses until ulid_flake_check_node() draws this one's.
	if _, err := conn.Exec(ctx, `SELECT ulid_flake_check_node(); CREATE TABLE t (id `+d.column+`, v int NOT NULL); CHECKPOINT`); err != nil {
		b.Fatal(err)
	}
	var lsn0 string
	if err := conn.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn0); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := load(ctx, conn, rows); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	var wal, size, count int64
	if err := conn.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint, pg_relation_size('t_pkey')`,
		lsn0).Scan(&wal, &size); err != nil {
		b.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&count); err != nil {
		b.Fatal(err)
	}
	if count != int64(rows) {
		b.Fatalf("%d rows loaded, want %d", count, rows)
	}
	return loaded{rows: rows, elapsed: elapsed, wal: wal, pkBytes: size}
}
