package itest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/sidlease"
)

// LeaseValidity is the validity the lease tests use: short, to keep them
// quick; the safety argument does not depend on its length.
const LeaseValidity = time.Second

// NewPool opens a pool of its own, closed when the test ends: another
// instance.
func NewPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// MintLog records, for one lease, the time before each call to New that
// succeeded (the lease was valid at some moment after it), the IDs, and
// the error that stopped it. Read it under Mu.
type MintLog struct {
	Mu   sync.Mutex
	Last time.Time
	IDs  []ulidflake.ID
	Err  error
}

// MintUntil makes IDs from l until New fails other than with
// flake.ErrMonotonicOverflow, or stop closes.
func MintUntil(l *sidlease.Lease, stop <-chan struct{}) *MintLog {
	m := &MintLog{}
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			before := time.Now()
			id, err := l.New()
			m.Mu.Lock()
			if err == nil {
				m.Last, m.IDs = before, append(m.IDs, id)
			} else if !errors.Is(err, flake.ErrMonotonicOverflow) {
				m.Err = err
				m.Mu.Unlock()
				return
			}
			m.Mu.Unlock()
		}
	}()
	return m
}

// LeasePaths runs fn on each way an instance reaches the server: directly,
// and through PgBouncer in session and in transaction pooling mode (2
// server connections: instances share them), with pgx in its default exec
// mode.
func LeasePaths(t *testing.T, fn func(t *testing.T, db *pgtest.DB, pool *pgxpool.Pool)) {
	t.Helper()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		for _, path := range []string{"direct", "pgbouncer-session", "pgbouncer-transaction"} {
			t.Run(path, func(t *testing.T) {
				t.Parallel()
				db := db.Server.NewDB(t) // a database of its own per path
				u := db.URL
				switch path {
				case "pgbouncer-session":
					u = db.Server.PgBouncer(t, db, "session", 40)
				case "pgbouncer-transaction":
					u = db.Server.PgBouncer(t, db, "transaction", 2)
				}
				cfg, err := pgxpool.ParseConfig(u)
				require.NoError(t, err)
				cfg.MaxConns = 40
				pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
				require.NoError(t, err)
				t.Cleanup(pool.Close)
				fn(t, db, pool)
			})
		}
	})
}
