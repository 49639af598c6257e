package sidlease_test

import (
	"context"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sidlease"
)

// lossLog is an Observer that logs lost leases; the OpenTelemetry adapter
// (github.com/ulidflake/ulidflake/otel) turns every event into metrics.
type lossLog struct{}

func (lossLog) Observe(e flake.Event) {
	if e.Kind == flake.EventLeaseLoss {
		slog.Warn("SID lost", "namespace", e.Namespace, "sid", e.SID)
	}
}

func ExampleWithObserver() {
	if os.Getenv("DATABASE_URL") == "" {
		return // needs a server
	}
	pool, err := pgxpool.New(context.Background(), os.Getenv("DATABASE_URL"))
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	// Claims, heartbeats and losses go to the observer, with the namespace.
	lease, err := sidlease.Acquire(context.Background(), pool, "orders-service", sidlease.WithObserver(lossLog{}))
	if err != nil {
		panic(err)
	}
	defer lease.Close()
}
