package blocks_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/flake"
)

// handed is one ID and the wall clock just before New was called and just
// after it returned.
type handed struct {
	id            flake.ID
	before, after time.Time
}

// itemsTable is where the writers write: a primary key, so that a
// duplicate fails the insert, and DEFAULT ulid_flake() for rows the
// database makes IDs for.
const itemsTable = `CREATE TABLE items (id bigint PRIMARY KEY DEFAULT ulid_flake(), w int NOT NULL, by_default boolean NOT NULL DEFAULT true)`

// writer is one instance: its own pool and Source. It makes n IDs, writes
// them in batches, and after each batch lets the database make a few
// rows' IDs by DEFAULT. Writes that fail (a restart) are retried.
func writer(ctx context.Context, url string, w, n int, opts ...blocks.Option) ([]handed, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(2)
	// 256 instances starting at once on two busy cores (or behind 4
	// pooled connections) can wait longer than the default 10 s for their
	// first block; the options given come after, and win.
	src, err := blocks.NewSource(db, append([]blocks.Option{blocks.WithTimeout(2 * time.Minute)}, opts...)...)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	out := make([]handed, 0, n)
	batch := make([]int64, 0, 100)
	for len(out) < n {
		before := time.Now()
		id, err := src.NewWait(ctx)
		if err != nil {
			return out, fmt.Errorf("writer %d, ID %d: %w", w, len(out), err)
		}
		out = append(out, handed{id, before, time.Now()})
		if batch = append(batch, id.Int64()); len(batch) == cap(batch) || len(out) == n {
			if err := write(ctx, db, w, batch); err != nil {
				return out, err
			}
			batch = batch[:0]
		}
	}
	return out, nil
}

// write inserts ids, and three rows with DEFAULT IDs, retrying until ctx
// ends (a restart): a duplicate key is not retried.
func write(ctx context.Context, db *sql.DB, w int, ids []int64) error {
	for {
		// A batch this writer wrote before its connection broke is not
		// written again; any other row with one of its IDs fails it.
		_, err := db.ExecContext(ctx, `INSERT INTO items (id, w, by_default) SELECT u.id, $2, false
			FROM pg_catalog.unnest($1::bigint[]) AS u(id)
			WHERE NOT EXISTS (SELECT FROM items AS i WHERE i.id = u.id AND i.w = $2 AND NOT i.by_default)`, ids, w)
		if err == nil {
			_, err = db.ExecContext(ctx, `INSERT INTO items (w) SELECT $1 FROM pg_catalog.generate_series(1, 3)`, w)
		}
		if err == nil || isUniqueViolation(err) || ctx.Err() != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runWriters runs n writers at once, each making per IDs, and returns
// every ID they were handed; it fails t with their errors.
func runWriters(t *testing.T, ctx context.Context, url string, n, per int, opts ...blocks.Option) []handed {
	t.Helper()
	all, err := writeAll(ctx, url, n, per, opts...)
	require.NoError(t, err)
	return all
}

// writeAll runs n writers at once, each making per IDs, and returns every
// ID they were handed and their errors. It uses no *testing.T, so that it
// may run outside the test's goroutine.
func writeAll(ctx context.Context, url string, n, per int, opts ...blocks.Option) ([]handed, error) {
	return gather(n, func(w int) ([]handed, error) { return writer(ctx, url, w, per, opts...) })
}

// collect runs run for instances 0..n-1 at once and returns every ID they
// were handed; it fails t with their errors.
func collect(t *testing.T, n int, run func(w int) ([]handed, error)) []handed {
	t.Helper()
	all, err := gather(n, run)
	require.NoError(t, err)
	return all
}

// gather runs run for instances 0..n-1 at once and returns every ID they
// were handed and their errors, joined.
func gather(n int, run func(w int) ([]handed, error)) ([]handed, error) {
	var mu sync.Mutex
	var all []handed
	var errs []error
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			got, err := run(w)
			mu.Lock()
			defer mu.Unlock()
			all = append(all, got...)
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	return all, errors.Join(errs...)
}

// requireWritten checks that every handed ID is in items, once, and that
// no two rows share an ID (the primary key refuses it; the count proves
// the rows are all there).
func requireWritten(t *testing.T, ctx context.Context, db *sql.DB, all []handed, defaults int) {
	t.Helper()
	ids := make([]flake.ID, len(all))
	for i, h := range all {
		ids[i] = h.id
	}
	slices.Sort(ids)
	require.Equal(t, len(ids), len(slices.Compact(ids)), "duplicate IDs handed out")
	var blockRows, defaultRows int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE NOT by_default), count(*) FILTER (WHERE by_default) FROM items`).
		Scan(&blockRows, &defaultRows))
	require.Equal(t, len(all), blockRows, "rows written with block IDs")
	require.GreaterOrEqual(t, defaultRows, defaults, "rows written with DEFAULT IDs")
}

// requireTimeOrder checks the time order the package promises: an ID's
// time is within validity before it was handed out (1 ms for the
// millisecond's rounding), and of two IDs handed out more than validity
// apart, the later one's time is not earlier. The database's clock is
// this machine's (a container on its kernel).
func requireTimeOrder(t *testing.T, all []handed, validity time.Duration) {
	t.Helper()
	epoch := flake.DefaultEpoch()
	ms := time.Millisecond
	// Plain checks, not testify's: these loops see up to 100,000 IDs, and
	// testify's calls cost 0.2 s per 100,000 under -race.
	for _, h := range all {
		if at := epoch.Time(h.id); at.Before(h.before.Add(-validity-ms)) || at.After(h.after.Add(ms)) {
			t.Fatalf("ID %s of %s, handed out between %s and %s: more than %v old", h.id, at, h.before, h.after, validity)
		}
	}
	byAfter := slices.SortedFunc(slices.Values(all), func(a, b handed) int { return a.after.Compare(b.after) })
	byBefore := slices.SortedFunc(slices.Values(all), func(a, b handed) int { return a.before.Compare(b.before) })
	var latest time.Time // the latest time of the IDs handed out more than validity before b
	i := 0
	for _, b := range byBefore {
		for ; i < len(byAfter) && byAfter[i].after.Add(validity).Before(b.before); i++ {
			latest = maxTime(latest, epoch.Time(byAfter[i].id))
		}
		if epoch.Time(b.id).Before(latest) {
			t.Fatalf("ID %s (%s) handed out more than %v after an ID of %s", b.id, epoch.Time(b.id), validity, latest)
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// isUniqueViolation reports whether err carries SQLSTATE 23505.
func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23505"
}
