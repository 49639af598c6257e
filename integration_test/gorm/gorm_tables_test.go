package gorm_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/gormplugin"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

type (
	// HookMember's BeforeCreate sets its own key, after the plugin filled
	// one.
	HookMember struct {
		ID    ulidflake.ID
		Email string       `gorm:"uniqueIndex;not null"`
		Want  ulidflake.ID `gorm:"-"`
	}
	// Account lives in a schema other than the search path's first.
	Account struct {
		ID    ulidflake.ID
		Email string `gorm:"uniqueIndex;not null"`
	}
	// ShopAccount names its table with a schema.
	ShopAccount struct {
		ID    ulidflake.ID
		Email string `gorm:"uniqueIndex;not null"`
	}
	// PtrAccount has a pointer key.
	PtrAccount struct {
		ID    *ulidflake.ID
		Email string
	}
)

func (ShopAccount) TableName() string { return "shop.accounts" }
func (PtrAccount) TableName() string  { return "shop.accounts" }

func (m *HookMember) BeforeCreate(*gorm.DB) error {
	if !m.Want.IsZero() {
		m.ID = m.Want
	}
	return nil
}

// Keys that BeforeCreate hooks set are the keys the correction after ON
// CONFLICT DO NOTHING looks up: the rows written keep them in memory, the
// one not written is zero.
func TestGormUpsertHookSetKeys(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&HookMember{}))
		require.NoError(t, db.Create(&HookMember{Email: "ada@example.com"}).Error)
		batch := make([]HookMember, 3)
		for i, email := range []string{"bob@example.com", "ada@example.com", "cy@example.com"} {
			want, err := ulidflake.New()
			require.NoError(t, err)
			batch[i] = HookMember{Email: email, Want: want}
		}
		res := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&batch)
		require.NoError(t, res.Error)
		require.EqualValues(t, 2, res.RowsAffected)
		for _, i := range []int{0, 2} {
			require.Equal(t, batch[i].Want, batch[i].ID, batch[i].Email)
			var got HookMember
			require.NoError(t, db.Where("email = ?", batch[i].Email).First(&got).Error)
			require.Equal(t, got.ID, batch[i].ID)
		}
		require.Zero(t, batch[1].ID, "the row not written kept a key")
	})
}

// With db.Table("schema.table"), mixed-case names and TableName methods,
// the correction after ON CONFLICT looks in the table the INSERT wrote to:
// it neither zeroes a written row's key because a same-named table exists
// elsewhere on the search path, nor fails because none does. Through
// Create, CreateInBatches, FirstOrCreate, Save, maps, pointer keys and a
// transaction that rolls back.
func TestGormUpsertSchemaTables(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, pdb *pgtest.DB) {
		t.Parallel()
		db, err := gorm.Open(postgres.Open(pdb.URL), &gorm.Config{Logger: logger.Discard})
		require.NoError(t, err)
		require.NoError(t, db.Use(gormplugin.NewPlugin()))
		for _, s := range []string{`shop`, `"Shop"`} {
			require.NoError(t, db.Exec(`CREATE SCHEMA `+s).Error)
			require.NoError(t, db.Exec(`CREATE TABLE `+s+`.accounts (id bigint PRIMARY KEY, email text UNIQUE NOT NULL)`).Error)
			require.NoError(t, db.Exec(`CREATE TABLE `+s+`."Accounts" (id bigint PRIMARY KEY, email text UNIQUE NOT NULL)`).Error)
		}
		dn := clause.OnConflict{DoNothing: true}
		for _, table := range []string{"shop.accounts", "Shop.accounts", "shop.Accounts", "Shop.Accounts"} {
			// Without a public.accounts: the correction must not fail. With
			// one: it must not look there.
			for _, public := range []bool{false, true} {
				if public {
					require.NoError(t, db.Exec(`CREATE TABLE IF NOT EXISTS public.accounts (id bigint PRIMARY KEY, email text)`).Error)
				}
				tdb := db.Table(table)
				require.NoError(t, tdb.Create(&Account{Email: "ada@example.com"}).Error)
				batch := []Account{{Email: "ada@example.com"}, {Email: "bob@example.com"}}
				require.NoError(t, db.Table(table).Clauses(dn).Create(&batch).Error, table)
				require.Zero(t, batch[0].ID, table)
				require.Equal(t, tableID(t, db, table, "bob@example.com"), batch[1].ID, table)

				more := []Account{{Email: "cy@example.com"}, {Email: "bob@example.com"}, {Email: "dee@example.com"}}
				require.NoError(t, db.Table(table).Clauses(dn).CreateInBatches(&more, 2).Error, table)
				require.Equal(t, tableID(t, db, table, "cy@example.com"), more[0].ID, table)
				require.Zero(t, more[1].ID, table)
				require.Equal(t, tableID(t, db, table, "dee@example.com"), more[2].ID, table)

				m := map[string]any{"email": "eve@example.com"}
				require.NoError(t, db.Table(table).Model(&Account{}).Clauses(dn).Create(m).Error, table)
				require.Equal(t, tableID(t, db, table, "eve@example.com"), m["id"], table)
				var foc Account
				require.NoError(t, db.Table(table).Where(Account{Email: "fay@example.com"}).FirstOrCreate(&foc).Error, table)
				require.Equal(t, tableID(t, db, table, "fay@example.com"), foc.ID, table)

				// Inside a transaction: the rows it wrote count as written,
				// and rolling back changes nothing else.
				require.Error(t, db.Transaction(func(tx *gorm.DB) error {
					require.NoError(t, tx.Table(table).Create(&Account{Email: "gus@example.com"}).Error)
					in := []Account{{Email: "gus@example.com"}, {Email: "hal@example.com"}}
					require.NoError(t, tx.Table(table).Clauses(dn).Create(&in).Error, table)
					require.Zero(t, in[0].ID)
					require.Equal(t, tableID(t, tx, table, "hal@example.com"), in[1].ID, table)
					return errors.New("roll back")
				}))
				require.NoError(t, db.Exec(`TRUNCATE shop.accounts, shop."Accounts", "Shop".accounts, "Shop"."Accounts"`).Error)
				if public {
					require.Zero(t, count(t, db, `SELECT count(*) FROM public.accounts`), "a row written to the wrong table")
				}
			}
			require.NoError(t, db.Exec(`DROP TABLE public.accounts`).Error)
		}

		// TableName methods, Save, and pointer keys.
		require.NoError(t, db.Create(&ShopAccount{Email: "ada@example.com"}).Error)
		require.NoError(t, db.Exec(`CREATE TABLE public.accounts (id bigint PRIMARY KEY, email text)`).Error)
		pair := []ShopAccount{{Email: "ada@example.com"}, {Email: "ivy@example.com"}}
		require.NoError(t, db.Clauses(dn).Create(&pair).Error)
		require.Zero(t, pair[0].ID)
		require.Equal(t, tableID(t, db, "shop.accounts", "ivy@example.com"), pair[1].ID)
		saved := ShopAccount{Email: "jo@example.com"}
		require.NoError(t, db.Clauses(dn).Save(&saved).Error)
		require.Equal(t, tableID(t, db, "shop.accounts", "jo@example.com"), saved.ID)
		ptrs := []*PtrAccount{{Email: "ada@example.com"}, {Email: "kim@example.com"}}
		require.NoError(t, db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "email"}}, DoNothing: true}).Create(&ptrs).Error)
		require.Nil(t, ptrs[0].ID)
		require.Equal(t, tableID(t, db, "shop.accounts", "kim@example.com"), *ptrs[1].ID)
	})
}

// tableID returns the key of the row with this email in table, named as
// GORM's Table takes it.
func tableID(t *testing.T, db *gorm.DB, table, email string) ulidflake.ID {
	t.Helper()
	var a Account
	require.NoError(t, db.Table(table).Where("email = ?", email).Take(&a).Error)
	return a.ID
}
