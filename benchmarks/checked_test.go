package benchmarks

import (
	"context"
	"flag"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ulidflake/ulidflake/benchmarks/internal/copyrounds"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

var (
	checkedReps = flag.Int("checked-reps", 5, "repetitions of BenchmarkCheckedStart: each runs both variants once")
	checkedRows = flag.Int("checked-rows", 1_000_000, "rows per COPY in BenchmarkCheckedStart")
)

// BenchmarkCheckedStart: what the server start's comparison costs an ID.
// COPY of -checked-rows rows into a table whose key defaults to
// ulid_flake() (its body compares pg_postmaster_start_time() with the
// start its node was checked on, then makes the ID) and into one whose
// key defaults to unchecked(), the same body without the comparison (the
// ID functions before the check), in ns per row. Each repetition
// (-checked-reps, default 5) runs both in turn, so that they interleave,
// the other first every other time; the tables are emptied before each
// COPY.
func BenchmarkCheckedStart(b *testing.B) {
	ctx := context.Background()
	db := pgtest.Servers(b)[0].NewDB(b)
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	// unchecked() is ulid_flake()'s body from THEN to its next WHEN: the ID
	// made when the start compares equal.
	if _, err := conn.Exec(ctx, `DO $$
		DECLARE def text := pg_get_functiondef('ulid_flake()'::regprocedure);
		BEGIN
			EXECUTE 'CREATE FUNCTION unchecked() RETURNS bigint LANGUAGE sql VOLATILE RETURN '
				|| split_part(split_part(def, ' THEN ', 2), ' WHEN ', 1);
		END $$;
		CREATE TABLE checked (id bigint PRIMARY KEY DEFAULT ulid_flake(), v int);
		CREATE TABLE unchecked (id bigint PRIMARY KEY DEFAULT unchecked(), v int)`); err != nil {
		b.Fatal(err)
	}
	copyrounds.Run(b, *checkedReps, *checkedRows, [2]string{"unchecked", "checked"},
		map[string]*pgx.Conn{"unchecked": conn, "checked": conn})
}
