package gorm_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/ulidflake/ulidflake"
)

// DO UPDATE with a WHERE that lets some conflicts update and skips others:
// RETURNING leaves out the skipped rows, so GORM's rows in order would go
// to the wrong values. Every value gets its own row's key: the key of the
// row it updated, of the row it inserted, or zero where its row was
// skipped; the other returned columns stay with their values, and children
// follow their parent's real key.
func TestGormUpsertWhereUpdatesKeepRowKeys(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&Member{}, &Post{}))
		ada := Member{Email: "ada@example.com", Name: "Ada"}
		bob := Member{Email: "bob@example.com", Name: "Bob"}
		require.NoError(t, db.Create(&[]*Member{&ada, &bob}).Error)
		// Conflicts update every member but Bob.
		upsert := clause.OnConflict{Columns: []clause.Column{{Name: "email"}}, DoUpdates: clause.AssignmentColumns([]string{"name"}),
			Where: clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "members.name <> ?", Vars: []any{"Bob"}}}}}

		// Bob's conflict first: skipped; Ada's updated; Cy's inserted.
		batch := []Member{
			{Email: "bob@example.com", Name: "Bob 2"},
			{Email: "ada@example.com", Name: "Ada L.", Posts: []Post{{Title: "by ada"}}},
			{Email: "cy@example.com", Name: "Cy"},
		}
		res := db.Clauses(upsert).Create(&batch)
		require.NoError(t, res.Error)
		require.Equal(t, int64(2), res.RowsAffected)
		require.Zero(t, batch[0].ID, "a skipped row kept a key")
		require.Equal(t, ada.ID, batch[1].ID, "the updated row's key")
		require.Equal(t, memberID(t, db, "cy@example.com"), batch[2].ID)
		require.Equal(t, []string{"bob@example.com", "ada@example.com", "cy@example.com"},
			[]string{batch[0].Email, batch[1].Email, batch[2].Email}, "returned columns moved between values")
		require.Equal(t, []string{"Bob 2", "Ada L.", "Cy"}, []string{batch[0].Name, batch[1].Name, batch[2].Name})
		var post Post
		require.NoError(t, db.Where("title = ?", "by ada").First(&post).Error)
		require.Equal(t, ada.ID, post.MemberID, "the child points at the row its parent updated")

		// One struct, a pointer slice, and the caller's own RETURNING *.
		one := Member{Email: "ada@example.com", Name: "Ada M."}
		require.NoError(t, db.Clauses(upsert).Create(&one).Error)
		require.Equal(t, ada.ID, one.ID)
		ptrs := []*Member{{Email: "bob@example.com", Name: "B"}, {Email: "ada@example.com", Name: "A"}}
		require.NoError(t, db.Clauses(upsert, clause.Returning{}).Create(&ptrs).Error)
		require.Zero(t, ptrs[0].ID)
		require.Equal(t, "B", ptrs[0].Name)
		require.Equal(t, ada.ID, ptrs[1].ID)
		require.Equal(t, "A", ptrs[1].Name)

		var n int64
		require.NoError(t, db.Model(&Member{}).Count(&n).Error)
		require.Equal(t, int64(3), n, "no row beyond Ada, Bob and Cy")
		require.Equal(t, bob.ID, memberID(t, db, "bob@example.com"))
		var zero []ulidflake.ID
		require.NoError(t, db.Model(&Member{}).Where("id = 0 OR id IS NULL").Pluck("id", &zero).Error)
		require.Empty(t, zero)
	})
}

// TextKeyed has a key stored as text.
type TextKeyed struct {
	ID    ulidflake.TextID `gorm:"primaryKey"`
	Email string           `gorm:"uniqueIndex;not null"`
}

// The look-up after DO NOTHING reads keys of every ID type in the type the
// column stores: a TextID key (text) from structs and from maps.
func TestGormUpsertTextKeys(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&TextKeyed{}))
		a := TextKeyed{Email: "a@example.com"}
		require.NoError(t, db.Create(&a).Error)
		batch := []TextKeyed{{Email: "a@example.com"}, {Email: "b@example.com"}}
		require.NoError(t, db.Clauses(clause.OnConflict{DoNothing: true}).Create(&batch).Error)
		require.Zero(t, batch[0].ID.ID, "a row not written kept a key")
		var b TextKeyed
		require.NoError(t, db.Where("email = ?", "b@example.com").First(&b).Error)
		require.Equal(t, b.ID, batch[1].ID)

		for _, email := range []string{"a@example.com", "c@example.com"} {
			m := map[string]any{"email": email}
			require.NoError(t, db.Model(&TextKeyed{}).Clauses(clause.OnConflict{DoNothing: true}).Create(m).Error)
			var row TextKeyed
			require.NoError(t, db.Where("email = ?", email).First(&row).Error)
			if email == "a@example.com" {
				require.Zero(t, m["ID"], "a map whose row was not written kept a key")
			} else {
				require.Equal(t, row.ID, m["ID"])
			}
		}
	})
}
