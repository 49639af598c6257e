package gormplugin_test

import (
	"fmt"

	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/schema"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
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

func openDB() *gorm.DB {
	// In memory, on one connection: nothing is left behind.
	db, err := gorm.Open(sqlite.Open(":memory:"), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		panic(err)
	}
	sdb, err := db.DB()
	if err != nil {
		panic(err)
	}
	sdb.SetMaxOpenConns(1)
	return db
}

func ExampleNew() {
	db := openDB()
	if err := db.Use(gormplugin.New()); err != nil {
		panic(err)
	}
	_ = db.AutoMigrate(&Customer{}, &Order{})

	c := Customer{Name: "Ada", Orders: []Order{{Total: 10}, {Total: 20}}}
	if err := db.Create(&c).Error; err != nil {
		panic(err)
	}
	fmt.Println(!c.ID.IsZero(), !c.Orders[0].ID.IsZero(), c.Orders[1].CustomerID == c.ID)
	// Output: true true true
}

func ExampleWithGenerator() {
	g, err := ulidflake.NewGenerator(flake.WithSID(5)) // this instance's SID
	if err != nil {
		panic(err)
	}
	db := openDB()
	_ = db.Use(gormplugin.New(gormplugin.WithGenerator(g)))
	_ = db.AutoMigrate(&Customer{})

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
	_ = db.Use(gormplugin.New(gormplugin.WithFields(func(f *schema.Field) bool {
		return f.PrimaryKey || f.Name == "TraceID"
	})))
	_ = db.AutoMigrate(&Event{})

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
	_ = db.Use(gormplugin.New())
	_ = db.AutoMigrate(&Audit{})

	a := Audit{}
	_ = db.Create(&a).Error
	fmt.Println(!a.BatchID.IsZero())
	// Output: true
}
