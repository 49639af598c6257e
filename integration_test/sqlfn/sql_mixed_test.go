package sqlfn_test

import (
	"context"
	"fmt"
	"testing"

	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestSQLMixedGeneratorsNeverCollide: ulid_flake() and
// ulid_flake_scalable(sid) with several SIDs writing one column: 2M rows
// from one statement with no duplicate, and concurrent sessions inserting
// 240,000 rows into a primary key, mixed per row, with no 23505 (a quick
// run: a fifth of each).
func TestSQLMixedGeneratorsNeverCollide(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		var n, distinct int64
		rows := pgtest.Scale(2_000_000, 400_000)
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM (
			SELECT CASE g % 4 WHEN 0 THEN ulid_flake() WHEN 1 THEN ulid_flake_scalable(0)
				WHEN 2 THEN ulid_flake_scalable(1) ELSE ulid_flake_scalable(31) END AS id
			FROM generate_series(1, $1) g) s`, rows).Scan(&n, &distinct))
		require.EqualValues(t, rows, n)
		require.Equal(t, n, distinct, "duplicates")

		_, err := db.Exec(ctx, `CREATE TABLE mixed (id bigint PRIMARY KEY, w int NOT NULL)`)
		require.NoError(t, err)
		const workers, batch = 6, 500
		each := pgtest.Scale(40_000, 8_000)
		gens := []string{"ulid_flake()", "ulid_flake_scalable(1)", "ulid_flake_scalable(2)", "ulid_flake_scalable(0)"}
		itest.RunWorkers(t, workers, func(w int) error {
			for done := 0; done < each; done += batch {
				b := &pgx.Batch{}
				for i := range batch {
					b.Queue(fmt.Sprintf(`INSERT INTO mixed (id, w) VALUES (%s, $1)`, gens[(w+i)%len(gens)]), w)
				}
				if err := db.SendBatch(ctx, b).Close(); err != nil {
					return err
				}
			}
			return nil
		})
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM mixed`).Scan(&n))
		require.EqualValues(t, workers*each, n)
	})
}

// TestSQLUpgradeFrom3KeepsIDsApart: the IDs version 3's functions make
// around the upgrade (statements still running after it) and the IDs the
// new functions make after it differ in the 15 bits above the SID, for
// 4096 sequence values on each side. Version 3's values after the upgrade
// are computed from its formula and the offset found by calling it.
func TestSQLUpgradeFrom3KeepsIDsApart(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, `CREATE SCHEMA up3`)
		require.NoError(t, err)
		_, err = migrationsTo(ctx, sdb, "up3", 3)
		require.NoError(t, err)
		// Version 3 in use: 4096 values of each before the upgrade.
		rows, err := conn.Query(ctx, `SELECT up3.ulid_flake(), pg_catalog.currval('up3.ulid_flake_seq') FROM generate_series(1, 4096)`)
		require.NoError(t, err)
		type pair struct{ id, s int64 }
		var before []pair
		for rows.Next() {
			var p pair
			require.NoError(t, rows.Scan(&p.id, &p.s))
			before = append(before, p)
		}
		require.NoError(t, rows.Err())
		a := ((before[0].id & 0xFFFFF) - (before[0].s & 0xFFFFF)) & 0xFFFFF
		last := before[len(before)-1].s
		_, err = migrationsTo(ctx, sdb, "up3", 4)
		require.NoError(t, err)
		old := map[int64]bool{} // 15-bit values version 3 gives, either generator
		for s := last - 4096; s < last+4096; s++ {
			old[(((s&0xFFFFF)+a)&0xFFFFF)>>5] = true
			old[((s&0x7FFF)+a)&0x7FFF] = true
		}
		for _, p := range before {
			require.True(t, old[(p.id&0xFFFFF)>>5])
		}
		rows, err = conn.Query(ctx, `SELECT CASE WHEN g % 2 = 0 THEN up3.ulid_flake() ELSE up3.ulid_flake_scalable(7) END
			FROM generate_series(1, 4000) g`)
		require.NoError(t, err)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err)
		for i, id := range ids {
			require.False(t, old[(id&0xFFFFF)>>5], "new ID %d (%d) shares its 15 bits with version 3's", i, id)
		}
	})
}

func migrationsTo(ctx context.Context, db *sql.DB, schema string, v int) ([]migrations.Step, error) {
	return migrations.Migrate(ctx, db, migrations.WithSchema(schema), migrations.WithTarget(v))
}
