package lease_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// BenchmarkSIDLeaseRenewal compares the renewal of the two lease
// designs, one round trip each, on each server, directly and through
// PgBouncer in transaction mode: the advisory-lock design's ownership check
// (pg_locks against pg_backend_pid(), which needs a connection of its own
// and cannot work behind a transaction pooler) and the lease table's
// renewal (an UPDATE by primary key and fencing token), which sidlease
// uses.
//
//	go test -run '^$' -bench SIDLeaseRenewal -count 6 ./integration_test/lease
func BenchmarkSIDLeaseRenewal(b *testing.B) {
	ctx := context.Background()
	for _, s := range serversOf(b) {
		db := s.NewDB(b)
		_, err := db.Exec(ctx, `CREATE TABLE leases (namespace text, sid int, token bigint NOT NULL DEFAULT 1,
			expires_at timestamptz, PRIMARY KEY (namespace, sid));
			INSERT INTO leases (namespace, sid) SELECT 'bench', g FROM generate_series(0, 31) g`)
		if err != nil {
			b.Fatal(err)
		}
		for _, path := range []string{"direct", "pgbouncer-transaction"} {
			u := db.URL
			if path != "direct" {
				u = s.PgBouncer(b, db, "transaction", 2)
			}
			conn, err := pgx.Connect(ctx, u)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(ctx)
			if path == "direct" {
				if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(1, 7)`); err != nil {
					b.Fatal(err)
				}
				b.Run(s.Name+"/"+path+"/advisory-lock-check", func(b *testing.B) {
					for b.Loop() {
						var held bool
						if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
							AND classid = 1 AND objid = 7 AND objsubid = 2 AND pid = pg_backend_pid() AND granted)`,
							pgx.QueryExecModeSimpleProtocol).Scan(&held); err != nil || !held {
							b.Fatal(err, held)
						}
					}
				})
			}
			b.Run(s.Name+"/"+path+"/lease-table-renew", func(b *testing.B) {
				for b.Loop() {
					tag, err := conn.Exec(ctx, `UPDATE leases SET expires_at = now() + 2 * $1 * interval '1 microsecond'
						WHERE namespace = $2 AND sid = $3 AND token = $4`, pgx.QueryExecModeSimpleProtocol, 2000000, "bench", 7, 1)
					if err != nil || tag.RowsAffected() != 1 {
						b.Fatal(err, tag)
					}
				}
			})
		}
	}
}

// serversOf returns the harness's servers for a benchmark.
func serversOf(b *testing.B) []*pgtest.Server { return pgtest.Servers(b) }
