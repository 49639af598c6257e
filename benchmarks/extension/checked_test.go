package extension

import (
	"context"
	"flag"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ulidflake/ulidflake/benchmarks/internal/copyrounds"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

var (
	extCheckedReps = flag.Int("ext-checked-reps", 5, "repetitions of BenchmarkExtensionCheckedStart: each runs both modules once")
	extCheckedRows = flag.Int("ext-checked-rows", 1_000_000, "rows per COPY in BenchmarkExtensionCheckedStart")
)

// BenchmarkExtensionCheckedStart: what issue #40's check at a server's
// first ID costs the C extension's IDs. COPY of -ext-checked-rows rows
// into a table whose key defaults to ulid_flake_next(nextval(…)) of the
// module as it is ("checked": it compares the state's started_at with the
// server's start once per statement) and into one whose key defaults to
// the module as it was before (commit 84ac12b, "pre40", which the image
// carries as ulid_flake_ext_pre40.so; see extension/image/build.sh), in ns
// per row. The two modules define the same setting, so each has a
// connection of its own: a backend loads only one. Each repetition
// (-ext-checked-reps, default 5) runs both in turn, the other first every
// other time; the tables are emptied before each COPY.
func BenchmarkExtensionCheckedStart(b *testing.B) {
	ctx := context.Background()
	db := pgtest.Servers(b)[0].NewDB(b)
	var pre40 bool
	if err := db.Pool.QueryRow(ctx, `SELECT to_regprocedure('ulid_flake_pre40.ulid_flake_next(bigint)') IS NOT NULL`).Scan(&pre40); err != nil {
		b.Fatal(err)
	}
	if !pre40 {
		b.Skip("the image has no module from before issue #40 (built without the repository's history: extension/image/build.sh)")
	}
	conns := map[string]*pgx.Conn{}
	for table, setup := range map[string]string{
		"checked": `SELECT ulid_flake_check_node();
			CREATE TABLE checked (id bigint PRIMARY KEY DEFAULT ulid_flake_next(nextval('ulid_flake_seq')), v int)`,
		"pre40": `SELECT ulid_flake_pre40.ulid_flake_check_node();
			CREATE TABLE pre40 (id bigint PRIMARY KEY
				DEFAULT ulid_flake_pre40.ulid_flake_next(nextval('ulid_flake_pre40.ulid_flake_seq')), v int)`,
	} {
		conn, err := pgx.Connect(ctx, db.URL)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, setup); err != nil {
			b.Fatal(err)
		}
		conns[table] = conn
	}
	copyrounds.Run(b, *extCheckedReps, *extCheckedRows, [2]string{"pre40", "checked"}, conns)
}
