package blocks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestLowRate: a caller that uses a block's IDs far slower than the validity
// ages them out, a few IDs a tick, never half a block: the Source reserves
// the next block ahead once half the validity has passed, so only the first
// call waits for a round trip (one more allowed for a slow machine, and one
// for each pause of the test and each reservation slower than half the
// validity, which a loaded machine makes), where reserving ahead at half a
// block alone made every block a wait. Each
// block left is reported expired, with the IDs it dropped.
func TestLowRate(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		var rec recorder
		validity := 400 * time.Millisecond
		src, err := blocks.NewSource(itest.StdDB(t, db), blocks.WithSize(1000), blocks.WithValidity(validity), blocks.WithObserver(&rec))
		require.NoError(t, err)
		defer src.Close()
		_, err = src.NewWait(context.Background()) // the first wait; on a loaded server it may be long
		require.NoError(t, err)
		gaps := 0 // pauses longer than half the validity (a starved test): a wait may follow each
		last := time.Now()
		for end := last.Add(8 * validity); time.Now().Before(end); time.Sleep(validity / 20) {
			if now := time.Now(); now.Sub(last) > validity/2 {
				gaps++
			}
			for range 3 {
				_, err := src.NewWait(context.Background())
				require.NoError(t, err)
			}
			last = time.Now()
		}
		require.NoError(t, src.Close())
		slow := 0 // reservations slower than half the validity (a loaded machine): the block ahead may come after the one in hand expired
		for _, e := range rec.of(eventReserve) {
			if e.Duration > validity/2 {
				slow++
			}
		}
		require.LessOrEqual(t, len(rec.of(eventBlockWait)), 2+gaps+slow, "block waits at a low rate, after %d long pauses and %d slow reservations", gaps, slow)
		ends := rec.of(eventEnd)
		require.GreaterOrEqual(t, len(ends), 5, "blocks expired in 8 validities")
		for _, e := range ends {
			require.Greater(t, e.Count, int64(900), "an expired block drops the IDs it did not hand out")
		}
	})
}
