package blocks_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/gormplugin"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// poolOf opens a *sql.DB on db that holds at most n connections.
func poolOf(t *testing.T, db *pgtest.DB, n int) *sql.DB {
	t.Helper()
	sdb, err := sql.Open("pgx", db.URL)
	require.NoError(t, err)
	t.Cleanup(func() { sdb.Close() })
	sdb.SetMaxOpenConns(n)
	return sdb
}

// TestPoolHeldByCaller: GORM's usual shape, a *sql.DB with
// SetMaxOpenConns(1) whose one connection a transaction holds while it
// creates rows through a Source on the same pool. The Source cannot have
// a connection beside the caller's: once WithTimeout passes, its error
// names the pool and the fix (SetMaxOpenConns, a *sql.DB of its own), not
// a bare timeout; with the same Source given a pool of its own, the
// transaction creates its rows.
func TestPoolHeldByCaller(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sdb := poolOf(t, db, 1)
		src, err := blocks.NewSource(sdb, blocks.WithTimeout(500*time.Millisecond))
		require.NoError(t, err)
		defer src.Close()
		g, err := gorm.Open(postgres.New(postgres.Config{Conn: sdb}), &gorm.Config{Logger: logger.Discard})
		require.NoError(t, err)
		require.NoError(t, g.Use(gormplugin.NewPlugin(gormplugin.WithSource(src))))
		g = g.WithContext(ctx)
		require.NoError(t, g.AutoMigrate(&blockOrder{}))
		err = g.Transaction(func(tx *gorm.DB) error { return tx.Create(&blockOrder{Total: 1}).Error })
		require.ErrorIs(t, err, blocks.ErrUnavailable)
		require.ErrorContains(t, err, "all 1 connections of the pool (SetMaxOpenConns(1)) are in use")
		require.ErrorContains(t, err, "raise SetMaxOpenConns, or give NewSource a *sql.DB of its own")

		own, err := blocks.NewSource(poolOf(t, db, 1), blocks.WithSize(2))
		require.NoError(t, err)
		defer own.Close()
		g, err = gorm.Open(postgres.New(postgres.Config{Conn: sdb}), &gorm.Config{Logger: logger.Discard})
		require.NoError(t, err)
		require.NoError(t, g.Use(gormplugin.NewPlugin(gormplugin.WithSource(own))))
		require.NoError(t, g.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			for i := range 10 { // blocks of 2: reservations while the transaction holds sdb's connection
				if err := tx.Create(&blockOrder{Total: i}).Error; err != nil {
					return err
				}
			}
			return nil
		}))
		var n int64
		require.NoError(t, sdb.QueryRowContext(ctx, "SELECT count(DISTINCT id) FROM block_orders WHERE id > 0").Scan(&n))
		require.EqualValues(t, 10, n)
	})
}

// TestOwnConnection: once a Source has reserved a block, it keeps a
// connection of its own, so callers that hold every other connection of
// a bounded pool (transactions that make IDs, say) still get IDs: the
// reservations never wait for a connection a caller holds. The pool
// holds 3; the callers take what they can (2), and one more once the
// Source is closed.
func TestOwnConnection(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sdb := poolOf(t, db, 3)
		src, err := blocks.NewSource(sdb, blocks.WithSize(2))
		require.NoError(t, err)
		defer src.Close()
		_, err = src.NewWait(ctx)
		require.NoError(t, err)

		var held []*sql.Conn // every connection the pool still gives
		for st := sdb.Stats(); st.InUse < st.MaxOpenConnections; st = sdb.Stats() {
			cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
			conn, err := sdb.Conn(cctx)
			ccancel()
			require.NoError(t, err)
			defer conn.Close()
			held = append(held, conn)
		}
		require.NotEmpty(t, held, "connections left to callers") // 2, unless a reservation given up on (past WithTimeout) still holds one
		seen := map[int64]bool{}
		for range 20 { // blocks of 2: ten reservations
			id, err := src.NewWait(ctx)
			require.NoError(t, err)
			require.False(t, seen[id.Int64()], "ID %s twice", id)
			seen[id.Int64()] = true
		}
		require.NoError(t, src.Close())
		tx, err := sdb.BeginTx(ctx, nil) // Close gave the Source's connection back
		require.NoError(t, err)
		require.NoError(t, tx.Rollback())
	})
}
