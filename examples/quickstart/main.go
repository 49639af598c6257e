// Quickstart: customers and orders keyed by Ulid-Flake IDs, with GORM.
//
//	go run ./examples/quickstart                       # in-memory SQLite, nothing to install
//	DATABASE_URL=postgres://... go run ./examples/quickstart   # PostgreSQL
//
// On PostgreSQL it uses, and drops at the start and at the end, only its
// own tables, quickstart_customers and quickstart_orders.
//
// It creates customers with their orders (the IDs are filled in on create),
// prints them with the creation time each ID carries, selects the orders
// created in a time window through the primary key, and prints the JSON an
// API would return.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/gormplugin"
)

// Customer has many orders.
type Customer struct {
	ID     ulidflake.ID `json:"id"`
	Name   string       `json:"name"`
	Orders []Order      `json:"orders,omitempty"`
}

// Order belongs to a customer.
type Order struct {
	ID         ulidflake.ID `json:"id"`
	CustomerID ulidflake.ID `json:"customer_id" gorm:"not null"` // NULL would read back as zero
	Item       string       `json:"item"`
	Cents      int          `json:"cents"`
}

// TableName keeps the quickstart's tables apart from an application's.
func (Customer) TableName() string { return "quickstart_customers" }

// TableName keeps the quickstart's tables apart from an application's.
func (Order) TableName() string { return "quickstart_orders" }

func main() {
	if err := run(context.Background(), os.Stdout, os.Getenv("DATABASE_URL")); err != nil {
		log.Fatal(err)
	}
}

// open opens PostgreSQL at url, or an SQLite file when url is empty.
func open(url string) (*gorm.DB, string, error) {
	cfg := &gorm.Config{Logger: logger.Discard}
	if url != "" {
		db, err := gorm.Open(postgres.Open(url), cfg)
		return db, "PostgreSQL", err
	}
	// An in-memory database on one connection: nothing is left behind.
	db, err := gorm.Open(sqlite.Open(":memory:"), cfg)
	if err != nil {
		return nil, "", err
	}
	sdb, err := db.DB()
	if err != nil {
		return nil, "", err
	}
	sdb.SetMaxOpenConns(1)
	return db, "SQLite (in memory)", nil
}

func run(ctx context.Context, w io.Writer, url string) error {
	db, backend, err := open(url)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "database:", backend)
	if err := db.Use(gormplugin.NewPlugin()); err != nil { // fills every zero ID key on create
		return err
	}
	drop := func() error { return db.Migrator().DropTable(&Order{}, &Customer{}) }
	if err := drop(); err != nil {
		return err
	}
	defer drop()
	if err := db.AutoMigrate(&Customer{}, &Order{}); err != nil { // id bigint PRIMARY KEY
		return err
	}
	db = db.WithContext(ctx)

	// Create customers with orders, a little apart in time.
	var window [2]time.Time
	for i, c := range []Customer{
		{Name: "Ada", Orders: []Order{{Item: "keyboard", Cents: 4900}, {Item: "mouse", Cents: 1900}}},
		{Name: "Grace", Orders: []Order{{Item: "monitor", Cents: 19900}}},
		{Name: "Linus", Orders: []Order{{Item: "cable", Cents: 900}, {Item: "dock", Cents: 8900}}},
	} {
		if i == 1 {
			window[0] = time.Now()
		}
		if err := db.Create(&c).Error; err != nil {
			return err
		}
		if i == 1 {
			window[1] = time.Now().Add(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Every key was filled on create; each carries its creation time, read
	// through the epoch it was made under (the plugin's generator's: here
	// the default).
	epoch := ulidflake.DefaultEpoch()
	var customers []Customer
	if err := db.Preload("Orders").Order("id").Find(&customers).Error; err != nil {
		return err
	}
	fmt.Fprintln(w, "\ncustomers and orders, in key order (= creation order):")
	for _, c := range customers {
		fmt.Fprintf(w, "  customer %s  %-6s created %s\n", c.ID, c.Name, epoch.Time(c.ID).Format(flake.RFC3339Milli))
		for _, o := range c.Orders {
			fmt.Fprintf(w, "    order  %s  %-9s created %s  (int %d)\n", o.ID, o.Item, epoch.Time(o.ID).Format(flake.RFC3339Milli), o.ID.Int64())
		}
	}

	// Orders created in a time window, through the primary-key index.
	lo, hi := epoch.MinID(window[0]), epoch.MinID(window[1])
	var inWindow []Order
	if err := db.Where("id >= ? AND id < ?", lo, hi).Order("id").Find(&inWindow).Error; err != nil {
		return err
	}
	fmt.Fprintf(w, "\norders created between %s and %s (WHERE id >= %s AND id < %s):\n",
		window[0].UTC().Format(flake.RFC3339Milli), window[1].UTC().Format(flake.RFC3339Milli), lo, hi)
	for _, o := range inWindow {
		fmt.Fprintf(w, "  order %s %s\n", o.ID, o.Item)
	}

	// What an API returns: IDs as 13-character strings, safe in JavaScript.
	out, err := json.MarshalIndent(customers[0], "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nJSON:\n%s\n", out)
	return nil
}
