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
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestPgBouncerSimpleProtocol: behind PgBouncer in transaction pooling, a
// Source on pgx's stdlib opened with default_query_exec_mode=simple_protocol
// (as the lease's docs say for database/sql), and GORM's postgres driver
// with PreferSimpleProtocol, hand out IDs and the plugin writes rows with
// them; blocks of 4 make many reservations. TestInstances covers
// default_query_exec_mode=exec.
func TestPgBouncerSimpleProtocol(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		u := db.Server.PgBouncer(t, db, "transaction", 2)
		sdb, err := sql.Open("pgx", u+"&default_query_exec_mode=simple_protocol")
		require.NoError(t, err)
		defer sdb.Close()
		src, err := blocks.NewSource(sdb, blocks.WithSize(4))
		require.NoError(t, err)
		defer src.Close()
		seen := map[int64]bool{}
		for range 100 {
			id, err := src.NewWait(ctx)
			require.NoError(t, err)
			require.False(t, seen[int64(id)], "ID %d twice", id)
			seen[int64(id)] = true
		}

		g, err := gorm.Open(postgres.New(postgres.Config{DSN: u, PreferSimpleProtocol: true}), &gorm.Config{Logger: logger.Discard})
		require.NoError(t, err)
		gdb, err := g.DB()
		require.NoError(t, err)
		defer gdb.Close()
		gsrc, err := blocks.NewSource(gdb, blocks.WithSize(4))
		require.NoError(t, err)
		defer gsrc.Close()
		require.NoError(t, g.Use(gormplugin.NewPlugin(gormplugin.WithSource(gsrc))))
		g = g.WithContext(ctx)
		require.NoError(t, g.AutoMigrate(&blockOrder{}))
		batch := make([]blockOrder, 50)
		require.NoError(t, g.CreateInBatches(&batch, 7).Error)
		var n int64
		require.NoError(t, itest.StdDB(t, db).QueryRowContext(ctx, "SELECT count(DISTINCT id) FROM block_orders WHERE id > 0").Scan(&n))
		require.EqualValues(t, 50, n)
	})
}
