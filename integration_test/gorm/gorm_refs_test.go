package gorm_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/glebarez/sqlite"
	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/gormplugin"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// The models of the reference tests: references are never the plugin's to
// invent.
type (
	// Basket and Label: many2many, labels unique by name.
	Basket struct {
		ID     ulidflake.ID
		Code   string  `gorm:"uniqueIndex;not null"`
		Labels []Label `gorm:"many2many:basket_labels"`
	}
	Label struct {
		ID   ulidflake.ID
		Name string `gorm:"uniqueIndex;not null"`
	}
	// Favourite is a link table: its key is two references.
	Favourite struct {
		CustomerID ulidflake.ID `gorm:"primaryKey"`
		OrderID    ulidflake.ID `gorm:"primaryKey"`
		Note       string
	}
	// Holder has one Passport whose key is the holder's key (a shared
	// primary key, declared only from the holder's side).
	Holder struct {
		ID       ulidflake.ID
		Email    string   `gorm:"uniqueIndex;not null"`
		Passport Passport `gorm:"foreignKey:HolderID"`
	}
	Passport struct {
		HolderID ulidflake.ID `gorm:"primaryKey"`
		Number   string
	}
	// Visa's key is a reference declared on the model itself (belongs to).
	Visa struct {
		HolderID ulidflake.ID `gorm:"primaryKey"`
		Holder   Holder
		Country  string
	}
	// BadLine tags a part of a composite key, BadNote a reference: the
	// plugin refuses both tags.
	BadLine struct {
		OrderID ulidflake.ID `gorm:"primaryKey"`
		LineID  ulidflake.ID `gorm:"primaryKey" ulidflake:"fill"`
	}
	BadNote struct {
		ID       ulidflake.ID
		HolderID ulidflake.ID `ulidflake:"fill"`
		Holder   Holder
	}
)

var refModels = []any{&Basket{}, &Label{}, &Favourite{}, &Holder{}, &Passport{}, &Visa{}, &BadLine{}, &BadNote{}}

// gormRunFK runs fn on PostgreSQL with and without foreign-key constraints
// and on SQLite with foreign_keys on and off; fk says which.
func gormRunFK(t *testing.T, fn func(t *testing.T, db *gorm.DB, fk bool)) {
	t.Helper()
	open := func(t *testing.T, d gorm.Dialector, fk bool) *gorm.DB {
		db, err := gorm.Open(d, &gorm.Config{Logger: logger.Discard, DisableForeignKeyConstraintWhenMigrating: !fk})
		require.NoError(t, err)
		require.NoError(t, db.Use(gormplugin.NewPlugin()))
		require.NoError(t, db.AutoMigrate(refModels...))
		return db
	}
	for _, fk := range []bool{true, false} {
		t.Run(fmt.Sprintf("fk=%v", fk), func(t *testing.T) {
			t.Parallel()
			pgtest.Run(t, func(t *testing.T, pdb *pgtest.DB) {
				t.Parallel()
				fn(t, open(t, postgres.Open(pdb.URL), fk), fk)
			})
			t.Run("sqlite", func(t *testing.T) {
				t.Parallel()
				dsn := filepath.Join(t.TempDir(), "refs.db") + fmt.Sprintf("?_pragma=foreign_keys(%d)", map[bool]int{true: 1}[fk])
				db := open(t, sqlite.Open(dsn), fk)
				sdb, err := db.DB()
				require.NoError(t, err)
				sdb.SetMaxOpenConns(1)
				t.Cleanup(func() { sdb.Close() })
				fn(t, db, fk)
			})
		})
	}
}

// count runs a count(*) query.
func count(t *testing.T, db *gorm.DB, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	require.NoError(t, db.Raw(sql, args...).Row().Scan(&n))
	return n
}

// dangling counts join rows that point at no basket or no label.
func dangling(t *testing.T, db *gorm.DB) int64 {
	return count(t, db, `SELECT count(*) FROM basket_labels j
		WHERE NOT EXISTS (SELECT 1 FROM labels l WHERE l.id = j.label_id)
		   OR NOT EXISTS (SELECT 1 FROM baskets b WHERE b.id = j.basket_id)`)
}

// A many2many association that already exists, created again by name or
// found first, or whose owner an ON CONFLICT DO NOTHING did not write: the
// join row is never given a made-up key. A missing reference fails the
// create (ErrZeroID, before the database sees it), and nothing is written.
func TestGormManyToManyExistingAssociation(t *testing.T) {
	t.Parallel()
	gormRunFK(t, func(t *testing.T, db *gorm.DB, fk bool) {
		vip := Label{Name: "vip"}
		require.NoError(t, db.Create(&vip).Error)

		// The label given by name only: GORM's DO NOTHING writes no label,
		// so the join row has no label to point at.
		b1 := Basket{Code: "b1", Labels: []Label{{Name: "vip"}}}
		err := db.Create(&b1).Error
		require.ErrorIs(t, err, ulidflake.ErrZeroID)
		require.ErrorContains(t, err, "basket_labels.label_id", "the error names the zero reference")
		require.Zero(t, count(t, db, `SELECT count(*) FROM baskets WHERE code = 'b1'`), "rolled back")
		require.Zero(t, count(t, db, `SELECT count(*) FROM basket_labels`))

		// The label found first, or created with an upsert that returns the
		// row's key: the join row points at it.
		var found Label
		require.NoError(t, db.Where(Label{Name: "vip"}).FirstOrCreate(&found).Error)
		b2 := Basket{Code: "b2", Labels: []Label{found}}
		require.NoError(t, db.Create(&b2).Error)
		up := Label{Name: "vip"}
		require.NoError(t, db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "name"}},
			DoUpdates: clause.AssignmentColumns([]string{"name"})}).Create(&up).Error)
		require.Equal(t, vip.ID, up.ID)
		b3 := Basket{Code: "b3", Labels: []Label{up, {Name: "new"}}}
		require.NoError(t, db.Create(&b3).Error)
		require.EqualValues(t, 3, count(t, db, `SELECT count(*) FROM basket_labels`))

		// The basket not written (DO NOTHING on its code): no join row for
		// a basket that does not exist.
		again := Basket{Code: "b2", Labels: []Label{found}}
		require.ErrorIs(t, db.Clauses(clause.OnConflict{DoNothing: true}).Create(&again).Error, ulidflake.ErrZeroID)
		require.Zero(t, again.ID)
		require.EqualValues(t, 3, count(t, db, `SELECT count(*) FROM basket_labels`))
		require.Zero(t, dangling(t, db))
	})
}

// A link table whose key is two references: a missing one is refused,
// never made up, from a struct, a slice or a map.
func TestGormLinkTableCompositeKey(t *testing.T) {
	t.Parallel()
	gormRunFK(t, func(t *testing.T, db *gorm.DB, _ bool) {
		c, err := ulidflake.New()
		require.NoError(t, err)
		o, err := ulidflake.New()
		require.NoError(t, err)

		err = db.Create(&Favourite{CustomerID: c}).Error
		require.ErrorIs(t, err, ulidflake.ErrZeroID)
		require.ErrorContains(t, err, "Favourite.OrderID (favourites.order_id) holds the zero ID")
		require.ErrorIs(t, db.Create(&[]Favourite{{CustomerID: c, OrderID: o}, {OrderID: o}}).Error, ulidflake.ErrZeroID)
		require.Error(t, db.Model(&Favourite{}).Create(map[string]any{"CustomerID": c}).Error)
		require.Zero(t, count(t, db, `SELECT count(*) FROM favourites`))

		f := Favourite{CustomerID: c, OrderID: o}
		require.NoError(t, db.Create(&f).Error)
		require.Equal(t, Favourite{CustomerID: c, OrderID: o}, f)
		require.EqualValues(t, 1, count(t, db, `SELECT count(*) FROM favourites WHERE customer_id = ? AND order_id = ?`, c, o))
	})
}

// A key that is a reference, shared with its owner, is never made up: not
// when declared on the model (belongs to), not when declared only on the
// owner (has one) whose row ON CONFLICT DO NOTHING did not write. The tag
// ulidflake:"fill" on a reference or on a part of a composite key is
// refused (gormplugin.ErrNotFillable).
func TestGormReferenceKeys(t *testing.T) {
	t.Parallel()
	gormRunFK(t, func(t *testing.T, db *gorm.DB, _ bool) {
		err := db.Create(&Visa{Country: "FR"}).Error
		require.ErrorIs(t, err, ulidflake.ErrZeroID)
		require.ErrorContains(t, err, "visas.holder_id")
		v := Visa{Country: "FR", Holder: Holder{Email: "ada@example.com"}}
		require.NoError(t, db.Create(&v).Error)
		require.NotZero(t, v.Holder.ID)
		require.Equal(t, v.Holder.ID, v.HolderID)

		h := Holder{Email: "bob@example.com", Passport: Passport{Number: "P1"}}
		require.NoError(t, db.Create(&h).Error)
		require.Equal(t, h.ID, h.Passport.HolderID)

		dup := Holder{Email: "bob@example.com", Passport: Passport{Number: "P2"}}
		require.ErrorIs(t, db.Clauses(clause.OnConflict{DoNothing: true}).Create(&dup).Error, ulidflake.ErrZeroID)
		require.Zero(t, dup.ID)
		require.Zero(t, count(t, db, `SELECT count(*) FROM passports WHERE number = 'P2'`))
		require.Zero(t, count(t, db, `SELECT count(*) FROM passports p WHERE NOT EXISTS (SELECT 1 FROM holders h WHERE h.id = p.holder_id)`))

		require.ErrorIs(t, db.Create(&BadLine{OrderID: h.ID}).Error, gormplugin.ErrNotFillable)
		require.ErrorIs(t, db.Create(&BadNote{}).Error, gormplugin.ErrNotFillable)
		require.Zero(t, count(t, db, `SELECT count(*) FROM bad_lines`)+count(t, db, `SELECT count(*) FROM bad_notes`))
	})
}

// Memo has a reference GORM leaves out of the INSERT when zero (it has a
// default) and a pointer reference.
type Memo struct {
	ID       ulidflake.ID
	AuthorID ulidflake.ID `gorm:"default:null"`
	EditorID *ulidflake.ID
}

// The error of a zero reference names the column whose value the driver
// refused: a pointer to a zero ID, not a zero field left out of the INSERT.
func TestGormZeroIDErrorNamesTheColumn(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&Memo{}))
		var zero ulidflake.ID
		err := db.Create(&Memo{EditorID: &zero}).Error
		require.ErrorIs(t, err, ulidflake.ErrZeroID)
		require.ErrorContains(t, err, "Memo.EditorID (memos.editor_id) holds the zero ID")
		require.NotContains(t, err.Error(), "author_id")
		require.NoError(t, db.Create(&Memo{}).Error, "a nil pointer is NULL, a zero field with a default is left out")
	})
}
