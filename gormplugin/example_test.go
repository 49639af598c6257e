package gormplugin_test

import (
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/schema"
	"gorm.io/gorm/utils/tests"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/gormplugin"
)

type Customer struct {
	ID     ulidflake.ID
	Name   string
	Orders []Order
}

type Order struct {
	ID         ulidflake.ID
	CustomerID ulidflake.ID
	Total      int
}

// openDB stands in for your gorm.Open(postgres.Open(dsn), ...): GORM's
// dummy dialector in dry-run mode builds every statement and runs none, so
// these examples need no database (examples/quickstart runs on a real one).
func openDB() *gorm.DB {
	db, err := gorm.Open(tests.DummyDialector{}, &gorm.Config{DryRun: true, Logger: logger.Discard})
	if err != nil {
		panic(err)
	}
	return db
}

func ExampleNewPlugin() {
	db := openDB()
	if err := db.Use(gormplugin.NewPlugin()); err != nil {
		panic(err)
	}
	c := Customer{Name: "Ada"}
	st := db.Create(&c).Statement
	fmt.Println(!c.ID.IsZero(), st.Vars[0] == c.ID)
	fmt.Println(st.SQL.String())
	// Output:
	// true true
	// INSERT INTO `customers` (`id`,`name`) VALUES (?,?)
}

func ExampleWithSource() {
	g, err := ulidflake.NewGenerator(ulidflake.WithSID(5)) // this instance's SID
	if err != nil {
		panic(err)
	}
	db := openDB()
	_ = db.Use(gormplugin.NewPlugin(gormplugin.WithSource(g)))

	c := Customer{Name: "Grace"}
	_ = db.Create(&c).Error
	fmt.Println(c.ID.SID())
	// Output: 5
}

func ExampleWithFields() {
	type Event struct {
		ID      ulidflake.ID
		TraceID ulidflake.ID // not a key: filled because the rule says so
	}
	db := openDB()
	_ = db.Use(gormplugin.NewPlugin(gormplugin.WithFields(func(f *schema.Field) bool {
		return f.PrimaryKey || f.Name == "TraceID"
	})))

	e := Event{}
	_ = db.Create(&e).Error
	fmt.Println(!e.ID.IsZero(), !e.TraceID.IsZero())
	// Output: true true
}

func ExampleDefaultFields() {
	type Audit struct {
		ID      ulidflake.ID
		BatchID ulidflake.ID `ulidflake:"fill"` // opts in under the default rule
	}
	db := openDB()
	_ = db.Use(gormplugin.NewPlugin())

	a := Audit{}
	_ = db.Create(&a).Error
	fmt.Println(!a.BatchID.IsZero())
	// Output: true
}

func ExampleErrNotFillable() {
	// A link table: its key is two references, which the plugin never
	// invents. Set both from the rows they refer to.
	type Favourite struct {
		CustomerID ulidflake.ID `gorm:"primaryKey"`
		OrderID    ulidflake.ID `gorm:"primaryKey"`
	}
	type Bad struct {
		CustomerID ulidflake.ID `gorm:"primaryKey"`
		LineID     ulidflake.ID `gorm:"primaryKey" ulidflake:"fill"` // refused
	}
	db := openDB()
	_ = db.Use(gormplugin.NewPlugin())

	f := Favourite{CustomerID: ulidflake.MustParse("00EZJCRCB4650")}
	_ = db.Create(&f).Error
	fmt.Println(f.OrderID.IsZero()) // not made up: the INSERT refuses it (ErrZeroID)
	fmt.Println(errors.Is(db.Create(&Bad{}).Error, gormplugin.ErrNotFillable))
	// Output:
	// true
	// true
}
