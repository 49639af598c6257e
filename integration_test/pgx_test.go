package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

var execModes = []pgx.QueryExecMode{
	pgx.QueryExecModeCacheStatement,
	pgx.QueryExecModeCacheDescribe,
	pgx.QueryExecModeDescribeExec,
	pgx.QueryExecModeExec,
	pgx.QueryExecModeSimpleProtocol,
}

func TestPgxRoundTripEveryMode(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		ids := itest.RandomIDs(10_000, 1)
		for _, register := range []bool{true, false} {
			for _, mode := range execModes {
				t.Run(fmt.Sprintf("register=%v/%s", register, mode), func(t *testing.T) {
					p := itest.Pool(t, db, register, mode)
					table := fmt.Sprintf("rt_%v_%d", register, mode)
					_, err := p.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY, ref bigint)`, table))
					require.NoError(t, err)

					b := &pgx.Batch{}
					for i, id := range ids {
						ref := ulidflake.NullID{ID: id, Valid: i%3 != 0}
						b.Queue(fmt.Sprintf(`INSERT INTO %s (id, ref) VALUES ($1, $2)`, table), id, ref)
					}
					require.NoError(t, p.SendBatch(ctx, b).Close())

					rows, err := p.Query(ctx, fmt.Sprintf(`SELECT id, ref FROM %s ORDER BY id`, table))
					require.NoError(t, err)
					var got []ulidflake.ID
					nulls := 0
					for rows.Next() {
						var id ulidflake.ID
						var ref ulidflake.NullID
						require.NoError(t, rows.Scan(&id, &ref))
						if ref.Valid {
							require.Equal(t, id, ref.ID)
						} else {
							nulls++
						}
						got = append(got, id)
					}
					require.NoError(t, rows.Err())
					want := slices.Clone(ids)
					slices.Sort(want)
					require.Equal(t, want, got)
					require.Equal(t, (len(ids)+2)/3, nulls)

					// A single value, both ways, and flake.ID and pointers when registered.
					var one ulidflake.ID
					require.NoError(t, p.QueryRow(ctx, `SELECT $1::bigint`, ulidflake.ID(flake.Max)).Scan(&one))
					require.Equal(t, ulidflake.ID(flake.Max), one)
					if register {
						var f flake.ID
						in := flake.ID(12345)
						require.NoError(t, p.QueryRow(ctx, `SELECT $1::bigint`, &in).Scan(&f))
						require.Equal(t, in, f)
					}
				})
			}
		}
	})
}

func TestPgxFailures(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, register := range []bool{true, false} {
			for _, mode := range execModes {
				t.Run(fmt.Sprintf("register=%v/%s", register, mode), func(t *testing.T) {
					p := itest.Pool(t, db, register, mode)
					var id ulidflake.ID

					err := p.QueryRow(ctx, `SELECT NULL::bigint`).Scan(&id)
					require.ErrorIs(t, err, flake.ErrNull)
					require.Contains(t, err.Error(), "NULL")

					err = p.QueryRow(ctx, `SELECT (-42)::bigint`).Scan(&id)
					require.ErrorIs(t, err, flake.ErrRange)
					require.Contains(t, err.Error(), "-42")

					err = p.QueryRow(ctx, `SELECT 9223372036854775808::numeric`).Scan(&id)
					require.Error(t, err)
					require.Contains(t, err.Error(), "9223372036854775808")

					err = p.QueryRow(ctx, `SELECT 'not-an-id'::text`).Scan(&id)
					require.Error(t, err)
					require.Contains(t, err.Error(), "not-an-id")

					// No zero ID is ever written.
					_, err = p.Exec(ctx, `SELECT $1::bigint`, ulidflake.ID(0))
					require.ErrorIs(t, err, ulidflake.ErrZeroID)
					_, err = p.Exec(ctx, `SELECT $1::bigint`, ulidflake.NullID{Valid: true})
					require.ErrorIs(t, err, ulidflake.ErrZeroID)
					_, err = p.Exec(ctx, `SELECT $1::bigint`, ulidflake.ID(-1))
					require.ErrorIs(t, err, flake.ErrRange)
					if register {
						_, err = p.Exec(ctx, `SELECT $1::bigint`, flake.ID(0))
						require.ErrorIs(t, err, ulidflake.ErrZeroID)
					}
					// The connection is still usable after the failures.
					require.NoError(t, p.QueryRow(ctx, `SELECT 7::bigint`).Scan(&id))
					require.Equal(t, ulidflake.ID(7), id)
				})
			}
		}
	})
}

func TestPgxPoolConcurrency(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		p := itest.Pool(t, db, true, pgx.QueryExecModeCacheStatement)
		_, err := p.Exec(ctx, `CREATE TABLE conc (id bigint PRIMARY KEY, worker int NOT NULL)`)
		require.NoError(t, err)

		const workers, each = 8, 500
		g, err := ulidflake.NewGenerator()
		require.NoError(t, err)
		itest.RunWorkers(t, workers, func(w int) error {
			for range each {
				id, err := g.NewWait(ctx)
				if err != nil {
					return err
				}
				if _, err = p.Exec(ctx, `INSERT INTO conc (id, worker) VALUES ($1, $2)`, id, w); err != nil {
					return err
				}
				var back ulidflake.ID
				if err = p.QueryRow(ctx, `SELECT id FROM conc WHERE id = $1`, id).Scan(&back); err != nil {
					return err
				}
				if back != id {
					return fmt.Errorf("read back %s, wrote %s", back, id)
				}
			}
			return nil
		})
		var n, distinct int
		require.NoError(t, p.QueryRow(ctx, `SELECT count(*), count(DISTINCT worker) FROM conc`).Scan(&n, &distinct))
		require.Equal(t, workers*each, n)
		require.Equal(t, workers, distinct)
	})
}

func TestPgxCopyFrom(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, register := range []bool{true, false} {
			t.Run(fmt.Sprintf("register=%v", register), func(t *testing.T) {
				p := itest.Pool(t, db, register, pgx.QueryExecModeCacheStatement)
				table := fmt.Sprintf("copy_%v", register)
				_, err := p.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY, parent bigint)`, table))
				require.NoError(t, err)
				ids := itest.RandomIDs(100_000, 2)
				n, err := p.CopyFrom(ctx, pgx.Identifier{table}, []string{"id", "parent"},
					pgx.CopyFromSlice(len(ids), func(i int) ([]any, error) {
						return []any{ids[i], ulidflake.NullID{ID: ids[(i+1)%len(ids)], Valid: i%2 == 0}}, nil
					}))
				require.NoError(t, err)
				require.EqualValues(t, len(ids), n)

				rows, err := p.Query(ctx, fmt.Sprintf(`SELECT id FROM %s ORDER BY id`, table))
				require.NoError(t, err)
				got, err := pgx.CollectRows(rows, pgx.RowTo[ulidflake.ID])
				require.NoError(t, err)
				want := slices.Clone(ids)
				slices.Sort(want)
				require.Equal(t, want, got)

				// A zero ID in a COPY fails the whole COPY: nothing is written. pgx
				// reports the encoding error through the server's COPY failure, as text.
				_, err = p.CopyFrom(ctx, pgx.Identifier{table}, []string{"id"},
					pgx.CopyFromRows([][]any{{ulidflake.ID(flake.Max - 1)}, {ulidflake.ID(0)}}))
				require.ErrorContains(t, err, ulidflake.ErrZeroID.Error())
				var count int
				require.NoError(t, p.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s`, table)).Scan(&count))
				require.Equal(t, len(ids), count)
			})
		}
	})
}

func TestPgxArrays(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, register := range []bool{true, false} {
			for _, mode := range execModes {
				if !register && (mode == pgx.QueryExecModeSimpleProtocol || mode == pgx.QueryExecModeExec) {
					continue // unregistered slices have no text encoding for an undescribed parameter; documented
				}
				t.Run(fmt.Sprintf("register=%v/%s", register, mode), func(t *testing.T) {
					p := itest.Pool(t, db, register, mode)
					table := fmt.Sprintf("arr_%v_%d", register, mode)
					_, err := p.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY)`, table))
					require.NoError(t, err)
					ids := itest.RandomIDs(1000, 3)
					_, err = p.Exec(ctx, fmt.Sprintf(`INSERT INTO %s SELECT unnest($1::bigint[])`, table), ids)
					require.NoError(t, err)

					want := ids[100:150]
					rows, err := p.Query(ctx, fmt.Sprintf(`SELECT id FROM %s WHERE id = ANY($1) ORDER BY id`, table), want)
					require.NoError(t, err)
					got, err := pgx.CollectRows(rows, pgx.RowTo[ulidflake.ID])
					require.NoError(t, err)
					sorted := slices.Clone(want)
					slices.Sort(sorted)
					require.Equal(t, sorted, got)

					var back []ulidflake.ID
					require.NoError(t, p.QueryRow(ctx, `SELECT $1::bigint[]`, want).Scan(&back))
					require.Equal(t, want, back)

					var nulls []ulidflake.NullID
					require.NoError(t, p.QueryRow(ctx, `SELECT ARRAY[5, NULL, 7]::bigint[]`).Scan(&nulls))
					require.Equal(t, []ulidflake.NullID{{ID: 5, Valid: true}, {}, {ID: 7, Valid: true}}, nulls)

					// A 0 in the column is not valid, on every path, as
					// NullID.Scan reads it (it printed 0000000000000).
					var zero ulidflake.NullID
					require.NoError(t, p.QueryRow(ctx, `SELECT 0::bigint`).Scan(&zero))
					require.Equal(t, ulidflake.NullID{}, zero)
					require.Equal(t, "NULL", zero.String())
					require.NoError(t, p.QueryRow(ctx, `SELECT ARRAY[0, 5]::bigint[]`).Scan(&nulls))
					require.Equal(t, []ulidflake.NullID{{}, {ID: 5, Valid: true}}, nulls)
				})
			}
		}
	})
}

func TestPgxJSONAndTimeRange(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		p := itest.Pool(t, db, true, pgx.QueryExecModeCacheStatement)
		_, err := p.Exec(ctx, `CREATE TABLE ev (id bigint PRIMARY KEY, at timestamptz NOT NULL)`)
		require.NoError(t, err)

		// IDs spread over ten days, one per 10 minutes, from a moving clock.
		start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
		now := start
		g, err := ulidflake.NewGenerator(flake.WithClock(func() time.Time { return now }))
		require.NoError(t, err)
		b := &pgx.Batch{}
		for now.Before(start.Add(10 * 24 * time.Hour)) {
			id, err := g.New()
			require.NoError(t, err)
			b.Queue(`INSERT INTO ev (id, at) VALUES ($1, $2)`, id, now)
			now = now.Add(10 * time.Minute)
		}
		require.NoError(t, p.SendBatch(ctx, b).Close())

		from, to := start.Add(36*time.Hour), start.Add(50*time.Hour+5*time.Minute)
		lo, hi := g.Epoch().MinID(from), g.Epoch().MinID(to)
		var n, want int
		require.NoError(t, p.QueryRow(ctx, `SELECT count(*) FROM ev WHERE id >= $1 AND id < $2`, lo, hi).Scan(&n))
		require.NoError(t, p.QueryRow(ctx, `SELECT count(*) FROM ev WHERE at >= $1 AND at < $2`, from, to).Scan(&want))
		require.Equal(t, want, n)
		require.Equal(t, 85, n) // 14h05m at one row per 10 minutes, both ends counted once
		// and the planner uses the primary key for it
		rows, err := p.Query(ctx, `EXPLAIN (COSTS OFF) SELECT * FROM ev WHERE id >= $1 AND id < $2`, lo, hi)
		require.NoError(t, err)
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Contains(t, strings.Join(plan, "\n"), "ev_pkey")

		// The JSON an API returns: the 13-character string.
		var row struct {
			ID ulidflake.ID `json:"id"`
			At time.Time    `json:"at"`
		}
		require.NoError(t, p.QueryRow(ctx, `SELECT id, at FROM ev ORDER BY id LIMIT 1`).Scan(&row.ID, &row.At))
		out, err := json.Marshal(row)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(out), `{"id":"`+row.ID.String()+`"`), string(out))
		require.Len(t, row.ID.String(), 13)
		require.True(t, ulidflake.DefaultEpoch().Time(row.ID).Equal(row.At), "%s vs %s", ulidflake.DefaultEpoch().Time(row.ID), row.At)
	})
}
