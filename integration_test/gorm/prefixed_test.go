package gorm_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/gormplugin"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

type (
	cusPrefix struct{}
	invPrefix struct{}
)

func (cusPrefix) Prefix() string { return "cus" }
func (invPrefix) Prefix() string { return "inv" }

// Prefixed per-entity IDs: cus_... and inv_... in text, bigint in the
// database.
type (
	CustomerID = ulidflake.Prefixed[cusPrefix]
	InvoiceID  = ulidflake.Prefixed[invPrefix]
	PCustomer  struct {
		ID   CustomerID `json:"id"`
		Name string     `json:"name"`
	}
	PInvoice struct {
		ID         InvoiceID  `json:"id"`
		CustomerID CustomerID `json:"customer_id"`
		Customer   *PCustomer `json:"-"`
		Previous   *InvoiceID `json:"previous"`
	}
)

// TestGormPrefixedIDs: the plugin fills prefixed keys on every create path
// that plain IDs take (single, batch, association, upsert), the columns
// are bigint, and the rows read back under their prefixes.
func TestGormPrefixedIDs(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&PCustomer{}, &PInvoice{}))
		inv := PInvoice{Customer: &PCustomer{Name: "ada"}}
		require.NoError(t, db.Create(&inv).Error)
		require.False(t, inv.ID.IsZero())
		require.False(t, inv.Customer.ID.IsZero())
		require.Equal(t, inv.Customer.ID, inv.CustomerID, "the association's key is the referrer's foreign key")

		batch := []PInvoice{{CustomerID: inv.CustomerID, Previous: &inv.ID}, {CustomerID: inv.CustomerID}}
		require.NoError(t, db.CreateInBatches(&batch, 1).Error)
		require.NotEqual(t, batch[0].ID, batch[1].ID)

		again := PCustomer{ID: inv.CustomerID, Name: "ada lovelace"}
		require.NoError(t, db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&again).Error)
		require.Equal(t, inv.CustomerID, again.ID)

		var got PInvoice
		require.NoError(t, db.First(&got, "id = ?", batch[0].ID).Error)
		require.Equal(t, batch[0].ID, got.ID)
		require.Equal(t, inv.ID, *got.Previous)
		b, err := json.Marshal(got)
		require.NoError(t, err)
		require.JSONEq(t, `{"id":"`+got.ID.String()+`","customer_id":"`+inv.CustomerID.String()+`","previous":"`+inv.ID.String()+`"}`, string(b))
		require.Regexp(t, `^inv_[0-9A-Z]{13}$`, got.ID.String())

		var n int64
		require.NoError(t, db.Model(&PInvoice{}).Where("customer_id = ?", inv.CustomerID).Count(&n).Error)
		require.EqualValues(t, 3, n)
		if db.Dialector.Name() == "postgres" {
			var types []string
			require.NoError(t, db.Raw(`SELECT data_type FROM information_schema.columns
				WHERE table_name = 'p_invoices' AND column_name IN ('id', 'customer_id', 'previous')`).Scan(&types).Error)
			require.Equal(t, []string{"bigint", "bigint", "bigint"}, types)
		}
		err = db.Create(&PInvoice{}).Error // no customer: the zero key is refused, not stored as 0
		require.True(t, errors.Is(err, ulidflake.ErrZeroID), "%v", err)
	})
}

// TestPrefixedIDsThroughPgxAndDatabaseSQL: a prefixed ID travels as a
// bigint, with and without pgxtype, in every query mode, and through
// database/sql.
func TestPrefixedIDsThroughPgxAndDatabaseSQL(t *testing.T) {
	t.Parallel()
	id := CustomerID{ID: ulidflake.MustParse("00EZJCRCB4650")}
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, register := range []bool{false, true} {
			for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
				p := itest.Pool(t, db, register, mode)
				var got CustomerID
				var typ string
				require.NoError(t, p.QueryRow(ctx, `SELECT $1::bigint, pg_typeof($1::bigint)::text`, id).Scan(&got, &typ))
				require.Equal(t, id, got, "register=%v mode=%v", register, mode)
				var n int64
				require.NoError(t, p.QueryRow(ctx, `SELECT $1::bigint`, id).Scan(&n))
				require.Equal(t, id.Int64(), n)
				var ptr *CustomerID
				require.NoError(t, p.QueryRow(ctx, `SELECT NULL::bigint`).Scan(&ptr))
				require.Nil(t, ptr)
				_, err := p.Exec(ctx, `SELECT $1::bigint`, CustomerID{})
				require.ErrorIs(t, err, ulidflake.ErrZeroID)
			}
		}
		sdb := itest.StdDB(t, db)
		var got CustomerID
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT $1::bigint`, id).Scan(&got))
		require.Equal(t, id, got)
	})
}

// TestGormKeySlicesRefused: GORM reads a slice of per-entity or prefixed
// IDs passed as a condition as a slice of models, and ANDs their keys
// (id = A AND id = B), which matches nothing: the plugin refuses such a
// query, update and delete with ErrIDsANDed instead of finding, changing
// or deleting nothing in silence. The forms the error names work.
func TestGormKeySlicesRefused(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.AutoMigrate(&PCustomer{}))
		cs := []PCustomer{{Name: "a"}, {Name: "b"}, {Name: "c"}}
		require.NoError(t, db.Create(&cs).Error)
		two := []CustomerID{cs[0].ID, cs[1].ID}

		var got []PCustomer
		require.ErrorIs(t, db.Find(&got, two).Error, gormplugin.ErrIDsANDed)
		require.ErrorIs(t, db.Where(two).Find(&got).Error, gormplugin.ErrIDsANDed)
		require.ErrorIs(t, db.Model(&PCustomer{}).Where(two).Update("name", "x").Error, gormplugin.ErrIDsANDed)
		require.ErrorIs(t, db.Delete(&PCustomer{}, two).Error, gormplugin.ErrIDsANDed)
		var n int64
		require.NoError(t, db.Model(&PCustomer{}).Where("name IN ?", []string{"a", "b"}).Count(&n).Error)
		require.EqualValues(t, 2, n, "nothing deleted or updated")

		require.ErrorIs(t, db.Where(&PCustomer{ID: cs[0].ID}).Where(&PCustomer{ID: cs[1].ID}).Find(&got).Error, gormplugin.ErrIDsANDed)
		require.ErrorIs(t, db.Where(map[string]any{"id": cs[0].ID}).Where(map[string]any{"id": cs[1].ID}).Find(&got).Error, gormplugin.ErrIDsANDed)
		// GORM prints Where(a).Where(b).Or(c) as "a AND b OR c", which finds c.
		require.NoError(t, db.Where(&PCustomer{ID: cs[0].ID}).Where(&PCustomer{ID: cs[1].ID}).Or(&PCustomer{ID: cs[2].ID}).Find(&got).Error)
		require.Len(t, got, 1)
		require.Equal(t, cs[2].ID, got[0].ID)
		require.NoError(t, db.Find(&got, "id IN ?", two).Error)
		require.Len(t, got, 2)
		require.NoError(t, db.Find(&got, []ulidflake.ID{cs[0].ID.ID, cs[2].ID.ID}).Error)
		require.Len(t, got, 2)
		require.NoError(t, db.Find(&got, two[:1]).Error)
		require.Len(t, got, 1)
		require.Equal(t, cs[0].ID, got[0].ID)
		res := db.Delete(&PCustomer{}, "id IN ?", two)
		require.NoError(t, res.Error)
		require.EqualValues(t, 2, res.RowsAffected)
	})
}
