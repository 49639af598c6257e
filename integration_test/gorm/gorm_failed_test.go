package gorm_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/ulidflake/ulidflake"
)

// Unique has a unique name, to make creates fail.
type Unique struct {
	ID    ulidflake.ID
	Name  string `gorm:"uniqueIndex"`
	Items []UniqueItem
}

// UniqueItem belongs to a Unique; its label is unique too.
type UniqueItem struct {
	ID       ulidflake.ID
	UniqueID ulidflake.ID
	Label    string `gorm:"uniqueIndex"`
}

// Refused's BeforeCreate hook fails.
type Refused struct {
	ID   ulidflake.ID
	Name string
}

var errRefused = errors.New("refused by the hook")

func (*Refused) BeforeCreate(*gorm.DB) error { return errRefused }

// After a create that fails, no struct keeps a key the plugin filled: the
// key is zero again (what the caller set stays), for a single value, a
// batch, children created with their parent, and a hook's refusal.
func TestGormFailedCreateKeepsNoFilledKey(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&Unique{}, &UniqueItem{}, &Refused{}))
		require.NoError(t, db.Create(&Unique{Name: "taken", Items: []UniqueItem{{Label: "taken"}}}).Error)

		one := Unique{Name: "taken"}
		require.Error(t, db.Create(&one).Error)
		require.True(t, one.ID.IsZero(), "single value: %s", one.ID)

		batch := []Unique{{Name: "fresh"}, {Name: "taken"}}
		require.Error(t, db.Create(&batch).Error)
		require.True(t, batch[0].ID.IsZero() && batch[1].ID.IsZero(), "batch: %s %s", batch[0].ID, batch[1].ID)

		ptrs := []*Unique{{Name: "fresh2"}, {Name: "taken"}}
		require.Error(t, db.Create(&ptrs).Error)
		require.True(t, ptrs[0].ID.IsZero() && ptrs[1].ID.IsZero(), "pointers: %s %s", ptrs[0].ID, ptrs[1].ID)

		set := ulidflake.MustParse("00EZJCRCB4650")
		mine := Unique{ID: set, Name: "taken"}
		require.Error(t, db.Create(&mine).Error)
		require.Equal(t, set, mine.ID, "the caller's key")

		parent := Unique{Name: "parent", Items: []UniqueItem{{Label: "new"}, {Label: "taken"}}}
		require.Error(t, db.Create(&parent).Error)
		require.True(t, parent.ID.IsZero(), "parent: %s", parent.ID)
		for i, it := range parent.Items {
			require.True(t, it.ID.IsZero(), "child %d: %s", i, it.ID)
		}

		refused := Refused{Name: "x"}
		require.ErrorIs(t, db.Create(&refused).Error, errRefused)
		require.True(t, refused.ID.IsZero(), "hook refused: %s", refused.ID)

		m := map[string]any{"Name": "taken"}
		require.Error(t, db.Model(&Unique{}).Create(m).Error)
		require.Equal(t, map[string]any{"Name": "taken"}, m, "map")

		var n int64
		require.NoError(t, db.Model(&Unique{}).Count(&n).Error)
		require.EqualValues(t, 1, n, "nothing of the failed creates is written")
		// A successful create after failed ones still fills.
		ok := Unique{Name: "ok"}
		require.NoError(t, db.Create(&ok).Error)
		require.False(t, ok.ID.IsZero())
	})
}
