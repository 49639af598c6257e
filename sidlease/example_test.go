package sidlease_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake/gormplugin"
	"github.com/ulidflake/ulidflake/sidlease"
)

func ExampleAcquire() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		panic(err)
	}
	defer pool.Close()

	// One lease per running instance; Acquire waits 3s (the validity, 2s, and
	// MaxClockAhead) before it returns.
	lease, err := sidlease.Acquire(ctx, pool, "orders-service")
	if err != nil {
		panic(err) // sidlease.ErrNoFreeSID when 32 instances already hold one
	}
	defer lease.Close() // releases the SID at once

	id, err := lease.NewWait(ctx) // waits while the lease takes a SID again
	if err != nil {
		panic(err)
	}
	fmt.Println(id.SID() == lease.SID())

	// The lease is a source for the GORM plugin too.
	_ = gormplugin.NewPlugin(gormplugin.WithSource(lease))
}

func ExampleWithValidity() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server
	}
	ctx := context.Background()
	pool, _ := pgxpool.New(ctx, url)
	defer pool.Close()
	// Detect a lost lease within 5s, with a renewal every 1.25s.
	lease, err := sidlease.Acquire(ctx, pool, "batch-jobs", sidlease.WithValidity(5e9))
	if err == nil {
		defer lease.Close()
	}
}

func ExampleWithLogger() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server
	}
	ctx := context.Background()
	pool, _ := pgxpool.New(ctx, url)
	defer pool.Close()
	// Failed renewals, a lost SID and claims again go to the application's log.
	lease, err := sidlease.Acquire(ctx, pool, "orders-service", sidlease.WithLogger(slog.Default()))
	if err == nil {
		defer lease.Close()
	}
}

func ExampleWithSchema() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server
	}
	ctx := context.Background()
	pool, _ := pgxpool.New(ctx, url)
	defer pool.Close()
	// The lease table in a schema of the application's own, which only its
	// owner may create objects in (once, as that owner:
	// CREATE SCHEMA ulid_flake). Every instance names the same schema.
	lease, err := sidlease.Acquire(ctx, pool, "orders-service", sidlease.WithSchema("ulid_flake"))
	if err != nil {
		panic(err) // sidlease.ErrLeaseTable names the fix when the schema is not its owner's alone
	}
	defer lease.Close()
}
