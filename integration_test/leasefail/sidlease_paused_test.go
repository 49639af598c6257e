package leasefail_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// A claimant paused between its claim and its proof for longer than the
// claim's expiry (a busy machine, a stopped process), emulated by expiring
// the claim while Acquire waits: Acquire claims again rather than fail, and
// says so in its log. No ID was made under the expired claim.
func TestSIDLeaseClaimExpiresWhileAcquiring(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		logs := &logRecords{}
		type result struct {
			l   *sidlease.Lease
			err error
		}
		done := make(chan result, 1)
		go func() {
			l, err := sidlease.Acquire(ctx, db.Pool, "paused", sidlease.WithValidity(testValidity), sidlease.WithLogger(slog.New(logs)))
			done <- result{l, err}
		}()
		expired := 0
		for deadline := time.Now().Add(30 * time.Second); expired == 0; {
			require.True(t, time.Now().Before(deadline), "no claim appeared")
			tag, err := db.Exec(ctx, `UPDATE ulid_flake_sid_leases SET expires_at = now() - interval '1 second'
				WHERE namespace = 'paused' AND holder IS NOT NULL AND expires_at > now()`)
			if err == nil { // the table may not exist yet
				expired = int(tag.RowsAffected())
			}
			time.Sleep(10 * time.Millisecond)
		}
		r := <-done
		require.NoError(t, r.err, "Acquire gave up after one expired claim")
		defer r.l.Close()
		again, msgs := logs.has("claiming again")
		require.True(t, again, "no log record of the claim made again: %q", msgs)
		_, err := r.l.New()
		require.NoError(t, err)
	})
}
