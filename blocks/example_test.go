package blocks_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver for database/sql

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/gormplugin"
)

func ExampleNewSource() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server migrated to version 5
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		panic(err)
	}
	defer db.Close()

	// One Source per instance, with no configuration of its own.
	src, err := blocks.NewSource(db)
	if err != nil {
		panic(err)
	}
	defer src.Close() // the IDs left in its blocks are never used

	id, err := src.NewWait(context.Background())
	if err != nil {
		panic(err) // blocks.ErrUnavailable: the database did not answer in time
	}
	fmt.Println(id.IsZero())

	// A Source is a source for the GORM plugin too.
	_ = gormplugin.NewPlugin(gormplugin.WithSource(src))
}

// NewWait waits for a block until its context ends or WithTimeout
// passes, then says why it has none.
func ExampleSource_NewWait_unreachable() {
	// A database that does not answer: nothing listens on port 1.
	db, _ := sql.Open("pgx", "postgres://app@127.0.0.1:1/app")
	defer db.Close()
	src, _ := blocks.NewSource(db, blocks.WithTimeout(200*time.Millisecond))
	defer src.Close()
	_, err := src.NewWait(context.Background())
	fmt.Println(errors.Is(err, blocks.ErrUnavailable))
	// Output: true
}

func ExampleSource_NewWait() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server migrated to version 5
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	src, _ := blocks.NewSource(db)
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	id, err := src.NewWait(ctx) // the first call waits for the first block
	fmt.Println(id, err)
}

func ExampleSource_Close() {
	db, _ := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	defer db.Close()
	src, _ := blocks.NewSource(db)
	_ = src.Close() // the IDs left in its blocks are never used
	_, err := src.NewWait(context.Background())
	fmt.Println(err)
	// Output: blocks: source closed
}

func ExampleWithSize() {
	db, _ := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	defer db.Close()
	// 8192 IDs per round trip, for an instance that makes thousands per second.
	src, err := blocks.NewSource(db, blocks.WithSize(8192))
	fmt.Println(err)
	_ = src.Close()
	// Output: <nil>
}

func ExampleWithValidity() {
	db, _ := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	defer db.Close()
	// IDs at most 100ms older than when they are handed out.
	src, err := blocks.NewSource(db, blocks.WithValidity(100*time.Millisecond))
	fmt.Println(err)
	_ = src.Close()
	// Output: <nil>
}

func ExampleWithSchema() {
	db, _ := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	defer db.Close()
	// The migrations installed into schema "ids" (migrations.WithSchema("ids")).
	src, err := blocks.NewSource(db, blocks.WithSchema("ids"))
	fmt.Println(err)
	_ = src.Close()
	// Output: <nil>
}

func ExampleWithTimeout() {
	_, err := blocks.NewSource(nil)
	fmt.Println(err)
	db, _ := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	defer db.Close()
	_, err = blocks.NewSource(db, blocks.WithTimeout(0))
	fmt.Println(err)
	// Output:
	// blocks: NewSource(nil): want a *sql.DB (flake: invalid option)
	// blocks: WithTimeout(0s): want a positive duration (flake: invalid option)
}

// failures is an Observer that counts failed reservations and prints
// each wait for a block.
type failures struct{ reserve atomic.Int64 }

func (f *failures) ObserveBlockReserve(_ int64, _ time.Duration, err error) {
	if err != nil {
		f.reserve.Add(1)
	}
}

func (f *failures) ObserveBlockWait(_ time.Duration, err error) {
	fmt.Println("block wait gave up:", errors.Is(err, blocks.ErrUnavailable))
}

func (f *failures) ObserveBlockEnd(int64) {}

func ExampleWithObserver() {
	// A database that does not answer: nothing listens on port 1.
	db, _ := sql.Open("pgx", "postgres://app@127.0.0.1:1/app")
	defer db.Close()
	var obs failures // in production, the OpenTelemetry adapter (module otelulidflake)
	src, _ := blocks.NewSource(db, blocks.WithObserver(&obs), blocks.WithTimeout(200*time.Millisecond))
	defer src.Close()
	_, err := src.NewWait(context.Background())
	fmt.Println(errors.Is(err, blocks.ErrUnavailable), obs.reserve.Load() > 0)
	// Output:
	// block wait gave up: true
	// true true
}
