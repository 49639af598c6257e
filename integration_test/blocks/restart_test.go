package blocks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestInstancesAcrossRestart: 256 instances write while the server
// restarts (every session ends; reservations and writes in flight fail
// and are retried): every ID handed out is written once, beside DEFAULT
// ones, and the time order holds across the restart.
func TestInstancesAcrossRestart(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewContainer(t)
	db := srv.NewDB(t)
	// Generous bounds: under -race with four servers busy, the restarted
	// server took over a minute to accept 256 instances again (CI).
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel() // on a failure below, this stops the writers too
	sdb := itest.StdDB(t, db)
	_, err := migrations.Migrate(ctx, sdb) // a server of its own: no migrated template
	require.NoError(t, err)
	_, err = sdb.ExecContext(ctx, itemsTable)
	require.NoError(t, err)

	const per = 400
	validity := 300 * time.Millisecond
	// The writers run in a goroutine of their own: they report to the test
	// through done, and never call t (a FailNow there would leave the test
	// waiting for them forever).
	type result struct {
		all []handed
		err error
	}
	done := make(chan result, 1)
	go func() {
		all, err := writeAll(ctx, db.URL, instances, per, blocks.WithSize(16), blocks.WithValidity(validity), blocks.WithTimeout(4*time.Minute))
		done <- result{all, err}
	}()
	var before int
	for before < instances*per/4 {
		select {
		case r := <-done:
			require.NoError(t, r.err, "the writers, before the restart")
			t.Fatalf("the writers finished before the restart, with %d of %d rows written", before, instances*per)
		case <-time.After(50 * time.Millisecond):
		}
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM items WHERE NOT by_default`).Scan(&before))
	}
	require.NoError(t, srv.Restart(ctx))
	r := <-done
	require.NoError(t, r.err)
	all := r.all
	require.Less(t, before, instances*per, "the restart came after the writers finished")
	require.Len(t, all, instances*per)
	requireWritten(t, ctx, sdb, all, instances*3*per/100)
	requireTimeOrder(t, all, validity)
}
