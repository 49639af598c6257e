package leasefail_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// partition is a TCP proxy to a server that can cut its clients off (every
// connection reset, new ones refused) and let them back.
type partition struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
}

func newPartition(t *testing.T, target string) *partition {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &partition{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	go p.serve()
	return p
}

func (p *partition) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		if !cut {
			p.conns = append(p.conns, c)
		}
		p.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		go func() {
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			_, _ = io.Copy(c, s)
			c.Close()
		}()
	}
}

// setCut cuts the clients off (every connection closed) or lets them back.
func (p *partition) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// through returns u with its host and port replaced by the proxy's.
func (p *partition) through(t *testing.T, u string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	require.NoError(t, err)
	parsed.Host = p.ln.Addr().String()
	return parsed.String()
}

// keepMinting calls New until stop closes, whatever it returns, and keeps
// every ID: a holder that comes back must not make what another made.
func keepMinting(l *sidlease.Lease, stop <-chan struct{}) func() []ulidflake.ID {
	var mu sync.Mutex
	var ids []ulidflake.ID
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if id, err := l.New(); err == nil {
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			} else {
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	return func() []ulidflake.ID { <-done; mu.Lock(); defer mu.Unlock(); return ids }
}

// TestSIDLeaseHolderComesBack: the holder BEFORE a lost claim comes back.
// A holds a SID and is cut off from the server (a partition, or a pause)
// until its row expires; B claims the SID; a failover then loses B's
// claim, so the row is again what the replica held: A's token, expired.
// A's connection returns. A must not take its renewal for proof that it
// still holds the SID: it claims again and waits like any new holder, and
// no ID is made twice.
func TestSIDLeaseHolderComesBack(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		const ns = "comes-back"
		sid, _ := oneFreeSID(t, db, ns)
		cut := newPartition(t, mustHost(t, db.URL))
		a, err := sidlease.Acquire(ctx, itest.NewPool(t, cut.through(t, db.URL)), ns, sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer a.Close()
		require.Equal(t, sid, a.SID())
		stop := make(chan struct{})
		aIDs := keepMinting(a, stop)
		time.Sleep(testValidity)
		var replica leaseRow // what the replica received: A's claim and renewals so far
		require.NoError(t, db.QueryRow(ctx, `SELECT token, minted_below, expires_at FROM ulid_flake_sid_leases
			WHERE namespace = $1 AND sid = $2`, ns, sid).Scan(&replica.token, &replica.mintedBelow, &replica.expires))

		cut.setCut(true)
		require.Eventually(t, func() bool {
			var expired bool
			return db.QueryRow(ctx, `SELECT expires_at < pg_catalog.now() FROM ulid_flake_sid_leases
				WHERE namespace = $1 AND sid = $2`, ns, sid).Scan(&expired) == nil && expired
		}, 30*testValidity, testValidity/10, "A's row never expired")
		b, err := sidlease.Acquire(ctx, itest.NewPool(t, db.URL), ns, sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer b.Close()
		require.Equal(t, sid, b.SID())
		bIDs := keepMinting(b, stop)
		time.Sleep(testValidity / 2)

		loseWrites(t, db, ns, sid, replica) // the failover: B's claim is lost
		cut.setCut(false)
		time.Sleep(4 * testValidity)
		close(stop)
		fromA, fromB := aIDs(), bIDs()
		require.NotEmpty(t, fromB)
		requireNoDuplicates(t, fromA, fromB)
	})
}

// mustHost returns the host:port of a connection URL.
func mustHost(t *testing.T, u string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	require.NoError(t, err)
	return parsed.Host
}

// TestSIDLeaseRefusesTemporaryTable: a lease table in pg_temp is one table
// per connection, which would grant every SID to every connection: a
// temporary schema is refused (ulidflake.ErrOption) before any statement. A
// search_path that starts with pg_temp changes nothing: the default table
// is public's, where the lease's rows are.
func TestSIDLeaseRefusesTemporaryTable(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, schema := range []string{"pg_temp", "pg_temp_1"} {
			_, err := sidlease.Acquire(ctx, db.Pool, "temp", sidlease.WithSchema(schema))
			require.ErrorIs(t, err, ulidflake.ErrOption)
			require.ErrorContains(t, err, "temporary")
		}

		u, err := url.Parse(db.URL)
		require.NoError(t, err)
		q := u.Query()
		q.Set("search_path", "pg_temp,public")
		u.RawQuery = q.Encode()
		l, err := sidlease.Acquire(ctx, itest.NewPool(t, u.String()), "temp", sidlease.WithValidity(testValidity))
		require.NoError(t, err)
		defer l.Close()
		var held int
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM public.ulid_flake_sid_leases
			WHERE namespace = 'temp' AND sid = $1 AND expires_at > now()`, l.SID()).Scan(&held))
		require.Equal(t, 1, held, "the lease's row in public's table")
	})
}

// TestSIDLeaseWildClockReading: the clock reads an hour ahead for a moment,
// then right again. The IDs made meanwhile are refused (they reach the
// ceiling), and the lease makes IDs again within a few renewals, not an hour
// later; every ID it returns is above every ID it returned before.
func TestSIDLeaseWildClockReading(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		var wild atomic.Bool
		clock := flake.WithClock(func() time.Time {
			if wild.Load() {
				return time.Now().Add(time.Hour)
			}
			return time.Now()
		})
		l, err := sidlease.Acquire(ctx, db.Pool, "wild", sidlease.WithValidity(testValidity), sidlease.WithGeneratorOptions(clock))
		require.NoError(t, err)
		defer l.Close()
		var last ulidflake.ID
		mint := func(d time.Duration) (made, refused int) {
			for deadline := time.Now().Add(d); time.Now().Before(deadline); {
				id, err := l.New()
				if err != nil {
					refused++
					continue
				}
				require.Greater(t, id, last)
				last, made = id, made+1
			}
			return made, refused
		}
		made, _ := mint(testValidity / 2)
		require.Positive(t, made)
		wild.Store(true)
		_, refused := mint(20 * time.Millisecond)
		wild.Store(false)
		require.Positive(t, refused, "IDs an hour ahead were returned")
		// NewWait returns ErrClockAhead at once while the last renewal saw
		// the wild reading; the next renewal, V/4 later, clears it.
		var id ulidflake.ID
		require.Eventually(t, func() bool {
			id, err = l.NewWait(ctx)
			return err == nil
		}, 10*testValidity, testValidity/20, "the lease makes no ID again once the clock is right")
		require.Greater(t, id, last)
		require.Less(t, time.Until(ulidflake.DefaultEpoch().Time(id)), time.Minute, "an ID from the wild reading's time")
	})
}
