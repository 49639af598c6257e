package gorm_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// Per-entity ID types: a struct that embeds ulidflake.ID keeps every method
// (JSON string, Value, Scan, text), while the compiler tells a ShopID
// from an ItemID.
type (
	ShopID struct{ ulidflake.ID }
	ItemID struct{ ulidflake.ID }
	Shop   struct {
		ID   ShopID
		Name string
	}
	Item struct {
		ID     ItemID
		ShopID ShopID
		Parent *ItemID
	}
)

func TestEntityIDTypes(t *testing.T) {
	t.Parallel()
	id := ShopID{ulidflake.MustParse("00EZJCRCB4650")}
	b, err := json.Marshal(struct{ Shop ShopID }{id})
	require.NoError(t, err)
	require.JSONEq(t, `{"Shop":"00EZJCRCB4650"}`, string(b))
	var back struct{ Shop ShopID }
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, id, back.Shop)

	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&Shop{}, &Item{}))
		s := Shop{Name: "corner"}
		require.NoError(t, db.Create(&s).Error)
		require.False(t, s.ID.IsZero())
		it := Item{ShopID: s.ID}
		require.NoError(t, db.Create(&it).Error)
		require.False(t, it.ID.IsZero())
		var got Item
		require.NoError(t, db.First(&got, "id = ?", it.ID).Error)
		require.Equal(t, it.ID, got.ID)
		require.Equal(t, s.ID, got.ShopID)
		require.Nil(t, got.Parent)
	})

	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, register := range []bool{false, true} {
			p := itest.Pool(t, db, register, pgx.QueryExecModeCacheStatement)
			var got ShopID
			require.NoError(t, p.QueryRow(ctx, `SELECT $1::bigint`, id).Scan(&got))
			require.Equal(t, id, got)
		}
	})
}
