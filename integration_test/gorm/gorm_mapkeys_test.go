package gorm_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
)

// TestGormMapKeysOfOtherTypes: a map create whose key is held as a plain
// integer or a decimal string. "0" and 0 are the unset key: filled, never
// written as row 0; a key that is no ID is refused before anything is
// written; a real key is kept.
func TestGormMapKeysOfOtherTypes(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		for _, zero := range []any{"0", int64(0), 0, uint(0)} {
			m := map[string]any{"ID": zero, "Name": "zero"}
			require.NoError(t, db.Model(&Plain{}).Create(m).Error, "%T %v", zero, zero)
			id, ok := m["ID"].(ulidflake.ID)
			require.True(t, ok, "%T %v not filled: %#v", zero, zero, m["ID"])
			require.NotZero(t, id)
		}
		var rowZero int64
		require.NoError(t, db.Model(&Plain{}).Where("id = 0").Count(&rowZero).Error)
		require.Zero(t, rowZero, "a row with key 0")

		err := db.Model(&Plain{}).Create(map[string]any{"ID": "abc", "Name": "bad"}).Error
		require.ErrorIs(t, err, flake.ErrCharacter)
		var bad int64
		require.NoError(t, db.Model(&Plain{}).Where("name = ?", "bad").Count(&bad).Error)
		require.Zero(t, bad)

		given := ulidflake.MustParse("00EZJCRCB4650")
		m := map[string]any{"ID": given.Int64(), "Name": "given"}
		require.NoError(t, db.Model(&Plain{}).Create(m).Error)
		require.Equal(t, given.Int64(), m["ID"])
	})
}

// A map whose key is held as a plain integer or decimal string, created
// with ON CONFLICT DO NOTHING on another unique column: when its row is
// not written, its key is zeroed in the type it is held as; when it is
// written, it is kept.
func TestGormMapKeysOfOtherTypesAfterUpsert(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&Unique{}))
		require.NoError(t, db.Create(&Unique{Name: "taken"}).Error)
		doNothing := clause.OnConflict{Columns: []clause.Column{{Name: "name"}}, DoNothing: true}
		for _, tc := range []struct {
			held, zero any
		}{
			{int64(0), int64(0)}, {0, 0}, {uint64(0), uint64(0)}, {"0", ""},
		} {
			fresh, err := ulidflake.New()
			require.NoError(t, err)
			key := map[any]any{int64(0): fresh.Int64(), 0: int(fresh.Int64()), uint64(0): uint64(fresh.Int64()), "0": fresh.String()}[tc.held]
			if s, ok := key.(string); ok { // a decimal string
				key = strconv.FormatInt(ulidflake.MustParse(s).Int64(), 10)
			}
			lost := map[string]any{"ID": key, "Name": "taken"}
			require.NoError(t, db.Model(&Unique{}).Clauses(doNothing).Create(lost).Error)
			require.Equal(t, tc.zero, lost["ID"], "%T key of a row not written", key)

			kept := map[string]any{"ID": key, "Name": fmt.Sprintf("new-%T", key)}
			require.NoError(t, db.Model(&Unique{}).Clauses(doNothing).Create(kept).Error)
			require.Equal(t, key, kept["ID"], "%T key of a row written", key)
		}
	})
}

// A map created through a model without a key gets it where GORM puts a
// key the database made: under the column name, m["id"], so that code
// written for a bigserial key reads the new key the same way (#32).
func TestGormMapKeyUnderColumnName(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		serial := map[string]any{"name": "serial"}
		require.NoError(t, db.Model(&Serial{}).Create(serial).Error)
		require.NotNil(t, serial["id"], "GORM's own key: %v", serial)

		for _, m := range []map[string]any{{"name": "one"}, {"Name": "two"}} {
			require.NoError(t, db.Model(&Plain{}).Create(m).Error)
			var row Plain
			require.NoError(t, db.Where("name IN ?", []string{"one", "two"}).Order("id DESC").First(&row).Error)
			require.Equal(t, row.ID, m["id"], "the key under the column name: %v", m)
			require.NotContains(t, m, "ID")
		}
	})
}
