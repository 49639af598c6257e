package gorm_test

import (
	"testing"
	"time"

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
				require.Zero(t, m["id"], "a map whose row was not written kept a key")
			} else {
				require.Equal(t, row.ID, m["id"])
			}
		}
	})
}

// Models of the realignment tests: fields GORM sets in the INSERT, a
// pointer conflict column, a conflict column with a default.
type (
	Score struct {
		ID        ulidflake.ID
		Email     string `gorm:"uniqueIndex;not null"`
		Points    int
		Kind      string `gorm:"default:basic"`
		CreatedAt time.Time
	}
	PtrScore struct {
		ID     ulidflake.ID
		Email  *string `gorm:"uniqueIndex"`
		Points int
	}
	TenantScore struct {
		ID     ulidflake.ID
		Tenant string `gorm:"uniqueIndex:tenant_email;default:main"`
		Email  string `gorm:"uniqueIndex:tenant_email"`
		Points int
	}
)

// higher updates a conflicting row only when the new points are higher.
func higher(table string, cols ...string) clause.OnConflict {
	var cs []clause.Column
	for _, c := range cols {
		cs = append(cs, clause.Column{Name: c})
	}
	return clause.OnConflict{Columns: cs, DoUpdates: clause.AssignmentColumns([]string{"points"}),
		Where: clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "excluded.points > " + table + ".points"}}}}
}

// The realignment keeps what GORM set in the INSERT (CreatedAt, defaults),
// matches pointer conflict columns and conflict columns filled from a
// default, and gives zero, never another value's row, where two values of
// a batch send the same conflict columns.
func TestGormUpsertWhereRealignsEveryField(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&Score{}, &PtrScore{}, &TenantScore{}))
		a := Score{Email: "a", Points: 10}
		require.NoError(t, db.Create(&a).Error)
		batch := []Score{{Email: "a", Points: 5}, {Email: "b", Points: 1}, {Email: "a2", Points: 1}}
		require.NoError(t, db.Clauses(higher("scores", "email")).Create(&batch).Error)
		require.Zero(t, batch[0].ID)
		var b Score
		require.NoError(t, db.Where("email = ?", "b").First(&b).Error)
		require.Equal(t, b.ID, batch[1].ID)
		require.Equal(t, "basic", batch[1].Kind, "a default GORM set was lost")
		require.False(t, batch[1].CreatedAt.IsZero(), "CreatedAt GORM set was lost")
		require.Equal(t, []string{"a", "b", "a2"}, []string{batch[0].Email, batch[1].Email, batch[2].Email})
		require.Equal(t, []int{5, 1, 1}, []int{batch[0].Points, batch[1].Points, batch[2].Points})

		email := "p"
		first := PtrScore{Email: &email, Points: 1}
		require.NoError(t, db.Clauses(higher("ptr_scores", "email")).Create(&first).Error)
		require.NotZero(t, first.ID)
		again := PtrScore{Email: &email, Points: 9}
		require.NoError(t, db.Clauses(higher("ptr_scores", "email")).Create(&again).Error)
		require.Equal(t, first.ID, again.ID, "a pointer conflict column did not match")

		tfirst := TenantScore{Email: "t", Points: 1}
		require.NoError(t, db.Clauses(higher("tenant_scores", "tenant", "email")).Create(&tfirst).Error)
		require.NotZero(t, tfirst.ID)
		tagain := []TenantScore{{Email: "t", Points: 9}}
		require.NoError(t, db.Clauses(higher("tenant_scores", "tenant", "email")).Create(&tagain).Error)
		require.Equal(t, tfirst.ID, tagain[0].ID, "a conflict column filled from its default did not match")

		if db.Dialector.Name() == "sqlite" { // PostgreSQL refuses one row updated twice in a statement
			dup := []Score{{Email: "a", Points: 1}, {Email: "c", Points: 1}, {Email: "a", Points: 20}}
			require.NoError(t, db.Clauses(higher("scores", "email")).Create(&dup).Error)
			require.Zero(t, dup[0].ID, "a skipped value got the row another value updated")
			require.Zero(t, dup[2].ID, "two values sent one conflict key: the database does not say which row is whose")
			var c Score
			require.NoError(t, db.Where("email = ?", "c").First(&c).Error)
			require.Equal(t, c.ID, dup[1].ID)
		}
	})
}
