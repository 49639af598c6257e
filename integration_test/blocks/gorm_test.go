package blocks_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/gormplugin"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

type blockOrder struct {
	ID    ulidflake.ID
	Total int
}

// TestGORM: the GORM plugin with a Source (gormplugin.WithSource)
// fills keys from blocks: eight instances, each with its own Source and
// pool, create rows one by one and in batches at once; every row is
// written with its own key, and the keys keep the stated time order.
func TestGORM(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		g, err := gorm.Open(postgres.New(postgres.Config{Conn: itest.StdDB(t, db)}), &gorm.Config{Logger: logger.Discard})
		require.NoError(t, err)
		require.NoError(t, g.AutoMigrate(&blockOrder{}))
		validity := 200 * time.Millisecond
		var mu sync.Mutex
		var all []handed
		itest.RunWorkers(t, 8, func(w int) error {
			g, err := gorm.Open(postgres.Open(db.URL), &gorm.Config{Logger: logger.Discard})
			if err != nil {
				return err
			}
			sdb, err := g.DB()
			if err != nil {
				return err
			}
			defer sdb.Close()
			src, err := blocks.NewSource(sdb, blocks.WithSize(32), blocks.WithValidity(validity))
			if err != nil {
				return err
			}
			defer src.Close()
			if err := g.Use(gormplugin.NewPlugin(gormplugin.WithSource(src))); err != nil {
				return err
			}
			g = g.WithContext(ctx)
			for i := range 50 {
				before := time.Now()
				one := blockOrder{Total: i}
				batch := make([]blockOrder, 20)
				if err := g.Create(&one).Error; err != nil {
					return err
				}
				if err := g.CreateInBatches(&batch, 7).Error; err != nil {
					return err
				}
				after := time.Now()
				mu.Lock()
				for _, o := range append(batch, one) {
					all = append(all, handed{o.ID, before, after})
				}
				mu.Unlock()
			}
			return nil
		})
		var ids []ulidflake.ID
		require.NoError(t, g.Model(&blockOrder{}).Order("id").Pluck("id", &ids).Error)
		require.Len(t, ids, 8*50*21)
		require.Len(t, slices.Compact(ids), len(ids), "duplicate keys")
		requireTimeOrder(t, all, validity)
	})
}
