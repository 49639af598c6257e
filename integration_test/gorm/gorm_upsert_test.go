package gorm_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
)

// The models of the upsert tests: a unique email besides the key.
type (
	Member struct {
		ID    ulidflake.ID
		Email string `gorm:"uniqueIndex;not null"`
		Name  string
		Posts []Post
	}
	Post struct {
		ID       ulidflake.ID
		MemberID ulidflake.ID
		Title    string `gorm:"uniqueIndex;not null"`
	}
	// PtrKey has a pointer key, FlakeKey a flake.ID key.
	PtrKey struct {
		ID   *ulidflake.ID
		Name string
	}
	FlakeKey struct {
		ID   flake.ID
		Name string
	}
)

// memberID returns the key of the row with this email.
func memberID(t *testing.T, db *gorm.DB, email string) ulidflake.ID {
	t.Helper()
	var m Member
	require.NoError(t, db.Where("email = ?", email).First(&m).Error)
	return m.ID
}

// After every create path with ON CONFLICT, the ID in memory is the ID of
// the row in the database, or zero where no row was written: single rows,
// batches mixing new and existing rows, and associations.
func TestGormUpsertKeepsRealIDs(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&Member{}, &Post{}))
		ada := Member{Email: "ada@example.com", Name: "Ada"}
		require.NoError(t, db.Create(&ada).Error)
		require.NotZero(t, ada.ID)

		// DO UPDATE on an existing email: the row keeps its key, and so
		// does the struct.
		upd := Member{Email: "ada@example.com", Name: "Ada L."}
		require.NoError(t, db.Clauses(clause.OnConflict{
			Columns: []clause.Column{{Name: "email"}}, DoUpdates: clause.AssignmentColumns([]string{"name"}),
		}).Create(&upd).Error)
		require.Equal(t, ada.ID, upd.ID, "DO UPDATE left a phantom ID in memory")

		// DO NOTHING on an existing email: nothing written, ID zero.
		none := Member{Email: "ada@example.com", Name: "ignored"}
		res := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&none)
		require.NoError(t, res.Error)
		require.Zero(t, res.RowsAffected)
		require.Zero(t, none.ID, "DO NOTHING left a phantom ID in memory")

		// Batches mixing existing and new rows.
		batch := []Member{{Email: "bob@example.com", Name: "Bob"}, {Email: "ada@example.com", Name: "Ada 2"}, {Email: "cy@example.com", Name: "Cy"}}
		require.NoError(t, db.Clauses(clause.OnConflict{
			Columns: []clause.Column{{Name: "email"}}, DoUpdates: clause.AssignmentColumns([]string{"name"}),
		}).Create(&batch).Error)
		for _, m := range batch {
			require.Equal(t, memberID(t, db, m.Email), m.ID, m.Email)
		}
		batch2 := []*Member{{Email: "bob@example.com"}, {Email: "dee@example.com", Name: "Dee"}}
		require.NoError(t, db.Clauses(clause.OnConflict{DoNothing: true}).Create(&batch2).Error)
		require.Zero(t, batch2[0].ID)
		require.Equal(t, memberID(t, db, "dee@example.com"), batch2[1].ID)

		// Associations created in the same call (GORM writes them with an ON
		// CONFLICT clause on their key): their IDs are their rows'.
		eve := Member{Email: "eve@example.com", Posts: []Post{{Title: "first"}, {Title: "fresh"}}}
		require.NoError(t, db.Create(&eve).Error)
		for _, p := range eve.Posts {
			var got Post
			require.NoError(t, db.Where("title = ?", p.Title).First(&got).Error)
			require.Equal(t, got.ID, p.ID)
			require.Equal(t, eve.ID, got.MemberID)
		}

		// An upsert whose parent already exists: its children point at the
		// row's real key.
		again := Member{Email: "eve@example.com", Name: "Eve", Posts: []Post{{Title: "second"}}}
		require.NoError(t, db.Clauses(clause.OnConflict{
			Columns: []clause.Column{{Name: "email"}}, DoUpdates: clause.AssignmentColumns([]string{"name"}),
		}).Create(&again).Error)
		require.Equal(t, eve.ID, again.ID)
		var second Post
		require.NoError(t, db.Where("title = ?", "second").First(&second).Error)
		require.Equal(t, eve.ID, second.MemberID, "the child points at a phantom parent")

		var n int64
		require.NoError(t, db.Model(&Member{}).Where("id = 0 OR id IS NULL").Count(&n).Error)
		require.Zero(t, n)
	})
}

// Pointer keys are filled, flake.ID keys are plain bigint keys (not
// auto-increment), and without the plugin neither is ever written as zero
// or NULL.
func TestGormKeyTypes(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&PtrKey{}, &FlakeKey{}))
		p := PtrKey{Name: "p"}
		require.NoError(t, db.Create(&p).Error)
		require.NotNil(t, p.ID)
		require.NotZero(t, *p.ID)
		f := FlakeKey{Name: "f"}
		require.NoError(t, db.Create(&f).Error)
		require.NotZero(t, f.ID)
		var got FlakeKey
		require.NoError(t, db.First(&got, "id = ?", f.ID).Error)
		require.Equal(t, f, got)

		plain := db.Session(&gorm.Session{NewDB: true})
		require.NoError(t, plain.Callback().Create().Remove("ulidflake:fill_ids"))
		require.ErrorIs(t, plain.Create(&FlakeKey{Name: "no key"}).Error, flake.ErrZeroID)
		var n int64
		require.NoError(t, db.Model(&FlakeKey{}).Count(&n).Error)
		require.EqualValues(t, 1, n, "a flake.ID key was written without the plugin")
	})
}

// Looking a row up by the string form: parse it, then query by the ID.
func TestGormLookupByString(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&Member{}, &Post{}))
		m := Member{Email: "lookup@example.com"}
		require.NoError(t, db.Create(&m).Error)
		s := m.ID.String()

		id, err := ulidflake.Parse(s)
		require.NoError(t, err)
		var got Member
		require.NoError(t, db.First(&got, "id = ?", id).Error)
		require.Equal(t, m.ID, got.ID)
		got = Member{}
		require.NoError(t, db.First(&got, id).Error)
		require.Equal(t, m.ID, got.ID)

		_, err = ulidflake.Parse("not-an-id")
		require.ErrorIs(t, err, flake.ErrLength)
	})
}

// DO UPDATE with a WHERE, whose RETURNING leaves out the rows it skips, and
// creates from maps: the ID in memory is the row's, or zero, never another
// row's, never shared by two values; children of a zeroed value are
// refused, not written pointing at nothing; a map's zero or nil key is
// filled under the key the map holds.
func TestGormUpsertWhereAndMaps(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&Member{}, &Post{}))
		ada := Member{Email: "ada@example.com", Name: "Ada"}
		require.NoError(t, db.Create(&ada).Error)
		skip := clause.OnConflict{Columns: []clause.Column{{Name: "email"}}, DoUpdates: clause.AssignmentColumns([]string{"name"}),
			Where: clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "1 = 0"}}}}

		one := Member{Email: "ada@example.com", Name: "skipped"}
		res := db.Clauses(skip).Create(&one)
		require.NoError(t, res.Error)
		require.Zero(t, res.RowsAffected)
		require.Zero(t, one.ID, "a row the WHERE skipped kept a phantom ID")

		batch := []Member{{Email: "ada@example.com"}, {Email: "bob@example.com", Name: "Bob"}}
		require.NoError(t, db.Clauses(skip).Create(&batch).Error)
		require.Zero(t, batch[0].ID)
		require.Equal(t, memberID(t, db, "bob@example.com"), batch[1].ID)

		parent := Member{Email: "ada@example.com", Posts: []Post{{Title: "orphan?"}}}
		require.ErrorIs(t, db.Clauses(skip).Create(&parent).Error, ulidflake.ErrZeroID)
		var n int64
		require.NoError(t, db.Model(&Post{}).Where("title = ?", "orphan?").Count(&n).Error)
		require.Zero(t, n, "a child was written pointing at no parent")

		for i, key := range []any{nil, ulidflake.ID(0), int64(0)} {
			email := fmt.Sprintf("map%d@example.com", i)
			m := map[string]any{"email": email, "id": key}
			require.NoError(t, db.Model(&Member{}).Create(m).Error, "key %#v", key)
			require.Equal(t, memberID(t, db, email), m["id"], "key %#v", key)
			require.NotContains(t, m, "ID")
		}
		for _, oc := range []clause.OnConflict{{DoNothing: true}, skip,
			{Columns: []clause.Column{{Name: "email"}}, DoUpdates: clause.AssignmentColumns([]string{"name"})}} {
			m := map[string]any{"email": "ada@example.com", "name": "Ada"}
			require.NoError(t, db.Model(&Member{}).Clauses(oc).Create(m).Error)
			if id, ok := m["id"]; ok {
				require.Zero(t, id, "a map kept a phantom ID")
			}
		}
		require.Equal(t, ada.ID, memberID(t, db, "ada@example.com"))
		require.NoError(t, db.Model(&Member{}).Where("id = 0 OR id IS NULL").Count(&n).Error)
		require.Zero(t, n)
	})
}

// Keys the caller set, and pointer keys, obey the same rule: after DO
// NOTHING or DO UPDATE, the key in memory is a row's, or zero (nil).
func TestGormUpsertGivenAndPointerKeys(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		type Tag2 struct {
			ID   *ulidflake.ID
			Name string `gorm:"uniqueIndex;not null"`
		}
		require.NoError(t, db.AutoMigrate(&Member{}, &Tag2{}))
		ada := Member{Email: "ada@example.com", Name: "Ada"}
		require.NoError(t, db.Create(&ada).Error)
		red := Tag2{Name: "red"}
		require.NoError(t, db.Create(&red).Error)

		dup := Tag2{Name: "red"}
		require.NoError(t, db.Clauses(clause.OnConflict{DoNothing: true}).Create(&dup).Error)
		require.Nil(t, dup.ID, "a pointer key kept an ID that no row has")
		tags := []*Tag2{{Name: "red"}, {Name: "blue"}}
		require.NoError(t, db.Clauses(clause.OnConflict{DoNothing: true}).Create(&tags).Error)
		require.Nil(t, tags[0].ID)
		require.NotNil(t, tags[1].ID)

		given, err := ulidflake.New()
		require.NoError(t, err)
		nothing := Member{ID: given, Email: "ada@example.com"}
		require.NoError(t, db.Clauses(clause.OnConflict{DoNothing: true}).Create(&nothing).Error)
		require.Zero(t, nothing.ID, "a key the caller set, not written, stayed in memory")
		given2, err := ulidflake.New()
		require.NoError(t, err)
		upd := Member{ID: given2, Email: "ada@example.com", Name: "Ada L."}
		require.NoError(t, db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "email"}},
			DoUpdates: clause.AssignmentColumns([]string{"name"})}).Create(&upd).Error)
		require.Equal(t, ada.ID, upd.ID, "DO UPDATE left the caller's key, which no row has")
	})
}
