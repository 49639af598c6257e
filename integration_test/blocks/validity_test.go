package blocks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestValidity: a Source left idle longer than its validity hands out no ID of
// the block it holds, nor of the one it reserved ahead: the next ID comes
// from a block asked for after the pause, within the validity of when it is
// handed out.
func TestValidity(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		validity := 200 * time.Millisecond
		// A busy machine's round trips can exceed the validity for more than
		// the default 10 s (two CPU hogs beside CI: 425 ms against 50 ms);
		// the test is about what comes after a pause, not about that wait.
		src, err := blocks.NewSource(itest.StdDB(t, db), blocks.WithSize(1000), blocks.WithValidity(validity), blocks.WithTimeout(2*time.Minute))
		require.NoError(t, err)
		defer src.Close()
		var all []handed
		for range 5 {
			for range 600 { // past half: the next block is reserved ahead
				before := time.Now()
				id, err := src.NewWait(context.Background())
				require.NoError(t, err)
				all = append(all, handed{id, before, time.Now()})
			}
			time.Sleep(3 * validity)
			pause := time.Now()
			id, err := src.NewWait(context.Background())
			require.NoError(t, err)
			require.Falsef(t, flake.DefaultEpoch().Time(id).Before(pause.Add(-validity-time.Millisecond)),
				"ID %s of %s, handed out after an idle pause that ended at %s", id, flake.DefaultEpoch().Time(id), pause)
			all = append(all, handed{id, pause, time.Now()})
		}
		requireTimeOrder(t, all, validity)
	})
}
