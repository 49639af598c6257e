package sidlease_test

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sidlease"
)

// lossLog is an Observer that logs lost leases and ignores the other
// events; the OpenTelemetry adapter
// (github.com/ulidflake/ulidflake/otelulidflake) turns every event into
// metrics.
type lossLog struct{}

func (lossLog) ObserveLeaseLoss(namespace string, sid int) {
	slog.Warn("SID lost", "namespace", namespace, "sid", sid)
}

func (lossLog) ObserveLeaseClaim(string, int, time.Duration, error)        {}
func (lossLog) ObserveLeaseRenew(string, int, time.Duration, int64, error) {}
func (lossLog) ObserveGenerator(string, flake.Event)                       {}

func ExampleWithObserver() {
	if os.Getenv("DATABASE_URL") == "" {
		return // needs a server
	}
	pool, err := pgxpool.New(context.Background(), os.Getenv("DATABASE_URL"))
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	// Claims, renewals and losses go to the observer, with the namespace.
	lease, err := sidlease.Acquire(context.Background(), pool, "orders-service", sidlease.WithObserver(lossLog{}))
	if err != nil {
		panic(err)
	}
	defer lease.Close()
}
