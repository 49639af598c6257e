package blocks_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// TestUnreachable: a database that refuses connections, and one that
// stops answering (a proxy that holds every byte, as a partition does),
// give ErrUnavailable, with the context's error, when the wait ends,
// never a hang and never an ID; once the database answers again, the
// same Source hands out IDs. A database with no install gives
// ErrNotInstalled at once.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		refused, err := sql.Open("pgx", "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
		require.NoError(t, err)
		defer refused.Close()
		src, err := blocks.NewSource(refused, blocks.WithTimeout(300*time.Millisecond))
		require.NoError(t, err)
		id, err := src.NewWait(context.Background())
		require.ErrorIs(t, err, blocks.ErrUnavailable)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Zero(t, id)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err = src.NewWait(ctx)
		cancel()
		require.ErrorIs(t, err, blocks.ErrUnavailable)
		require.NoError(t, src.Close())

		p := newProxy(t, db.URL)
		cfg, err := pgx.ParseConfig(db.URL)
		require.NoError(t, err)
		cfg.Host, cfg.Port = "127.0.0.1", p.port()
		cfg.ConnectTimeout = time.Second
		via := stdlib.OpenDB(*cfg)
		defer via.Close()
		src, err = blocks.NewSource(via, blocks.WithSize(8), blocks.WithValidity(200*time.Millisecond), blocks.WithTimeout(time.Second))
		require.NoError(t, err)
		defer src.Close()
		// A block in hand first. The first reservation opens the proxy's
		// first connection, which under -race on busy cores can take longer
		// than the 1 s timeout (CI, pg17): it may fail until it succeeds.
		for deadline := time.Now().Add(time.Minute); ; {
			if _, err = src.NewWait(context.Background()); err == nil || time.Now().After(deadline) {
				break
			}
			require.ErrorIs(t, err, blocks.ErrUnavailable)
		}
		require.NoError(t, err, "the first block")
		p.hold.Store(true)
		time.Sleep(400 * time.Millisecond) // the block grows too old
		for range 3 {
			_, err = src.NewWait(context.Background())
			require.ErrorIs(t, err, blocks.ErrUnavailable)
		}
		p.hold.Store(false)
		p.cut() // connections held meanwhile are broken, as after a partition
		// Each call waits at most the 1 s timeout, and the Source pauses up
		// to 1 s between failed reservations: a few calls may still fail.
		for deadline := time.Now().Add(time.Minute); ; {
			if _, err = src.NewWait(context.Background()); err == nil || time.Now().After(deadline) {
				break
			}
			require.ErrorIs(t, err, blocks.ErrUnavailable)
		}
		require.NoError(t, err, "after the database answers again")

		empty := itest.EmptyDB(t, db.Server)
		src, err = blocks.NewSource(empty)
		require.NoError(t, err)
		defer src.Close()
		_, err = src.NewWait(context.Background())
		require.ErrorIs(t, err, migrations.ErrNotInstalled)
	})
}

// proxy forwards TCP connections to a server; while hold is set it
// forwards nothing, in either direction.
type proxy struct {
	ln    net.Listener
	hold  atomic.Bool
	mu    sync.Mutex
	conns []net.Conn
}

func newProxy(t *testing.T, url string) *proxy {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	require.NoError(t, err)
	target := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go p.pipe(c, s)
			go p.pipe(s, c)
		}
	}()
	return p
}

func (p *proxy) port() uint16 { return uint16(p.ln.Addr().(*net.TCPAddr).Port) }

// pipe copies from src to dst, holding the bytes while hold is set.
func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for p.hold.Load() {
			time.Sleep(10 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				dst.Close()
			}
			return
		}
	}
}

// cut closes every connection made so far.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
