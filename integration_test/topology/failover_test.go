package topology_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

const validity = time.Second

// A primary and an asynchronous streaming replica. The replica stops
// receiving WAL; an instance then claims a SID on the primary, with its
// clock ahead of the server's (within MaxClockAhead), and makes IDs: its claim,
// its renewals and its ceilings never reach the replica. The primary is
// killed and the replica promoted; a second instance claims the same SID
// there (the only free one), and the first instance's pool follows the
// failover as a proxy or DNS name would. Both stay alive: the first must
// not make IDs again, and no ID is made twice or out of order across them.
func TestFailoverLosesLeaseWrites(t *testing.T) {
	t.Parallel()
	for _, major := range pgtest.TopologyVersions(t) {
		t.Run(fmt.Sprintf("pg%d", major), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			c := pgtest.NewCluster(t, major)
			primary := c.Primary(t, "primary")
			replica := c.Replica(t, "replica", primary)
			require.NoError(t, primary.Exec(ctx, `CREATE DATABASE app`))
			sid := oneFreeSID(t, primary, "failover")
			require.NoError(t, pgtest.CaughtUp(ctx, primary, replica))
			require.NoError(t, replica.Detach(ctx))

			var target atomic.Pointer[pgtest.Node]
			target.Store(primary)
			ahead := sidlease.WithGeneratorOptions(flake.WithClock(func() time.Time { return time.Now().Add(sidlease.MaxClockAhead * 8 / 10) }))
			old, err := sidlease.Acquire(ctx, following(t, &target), "failover", sidlease.WithValidity(validity), ahead)
			require.NoError(t, err)
			defer old.Close()
			require.Equal(t, sid, old.SID())
			stop := make(chan struct{})
			oldIDs := mint(old, stop)
			time.Sleep(validity) // renewals and ceilings the replica does not get

			require.NoError(t, primary.Kill(ctx))
			require.NoError(t, replica.Promote(ctx))
			next, err := sidlease.Acquire(ctx, newPool(t, replica.DB("app")), "failover", sidlease.WithValidity(validity))
			require.NoError(t, err)
			defer next.Close()
			require.Equal(t, sid, next.SID(), "the promoted replica's only free SID")
			target.Store(replica) // the old holder's pool now reaches the new primary
			nextIDs := mint(next, stop)
			time.Sleep(4 * validity) // both alive
			close(stop)

			_, err = old.New()
			require.ErrorIs(t, err, sidlease.ErrLeaseLost, "the old holder makes IDs on the new primary")
			o, n := oldIDs.wait(), nextIDs.wait()
			require.NotEmpty(t, o)
			require.NotEmpty(t, n)
			require.Less(t, slices.Max(o), slices.Min(n), "the new holder made IDs at or below the old holder's")
			all := append(slices.Clone(o), n...)
			slices.Sort(all)
			require.Len(t, slices.Compact(all), len(o)+len(n), "duplicate IDs")
		})
	}
}

// oneFreeSID creates the lease table of ns in the database app of node,
// marks every SID but one as held for ever, and returns the free one.
func oneFreeSID(t *testing.T, node *pgtest.Node, ns string) int {
	t.Helper()
	ctx := context.Background()
	pool := newPool(t, node.DB("app"))
	first, err := sidlease.Acquire(ctx, pool, ns, sidlease.WithValidity(validity))
	require.NoError(t, err)
	sid := first.SID()
	require.NoError(t, first.Close())
	_, err = pool.Exec(ctx, `UPDATE ulid_flake_sid_leases SET expires_at = 'infinity' WHERE namespace = $1 AND sid <> $2`, ns, sid)
	require.NoError(t, err)
	return sid
}

func newPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// following returns a pool whose new connections go to the node target
// holds at the time: a failover's proxy or DNS name.
func following(t *testing.T, target *atomic.Pointer[pgtest.Node]) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(target.Load().DB("app"))
	require.NoError(t, err)
	cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	cfg.BeforeConnect = func(_ context.Context, cc *pgx.ConnConfig) error {
		cc.Host, cc.Port = target.Load().HostPort()
		cc.Fallbacks = nil
		return nil
	}
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// minted collects the IDs a lease makes until stop closes.
type minted struct {
	done chan struct{}
	ids  []ulidflake.ID
}

func (m *minted) wait() []ulidflake.ID { <-m.done; return m.ids }

// mint calls New on l until stop closes, in bursts of 100 (so that two
// instances making IDs leave the servers some CPU), keeping every ID.
func mint(l *sidlease.Lease, stop <-chan struct{}) *minted {
	m := &minted{done: make(chan struct{})}
	var once sync.Once
	go func() {
		defer once.Do(func() { close(m.done) })
		for {
			select {
			case <-stop:
				return
			default:
				time.Sleep(time.Millisecond)
			}
			for range 100 {
				id, err := l.New()
				if err == nil {
					m.ids = append(m.ids, id)
				} else if !errors.Is(err, flake.ErrMonotonicOverflow) {
					break
				}
			}
		}
	}()
	return m
}
