package dbtest

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/otel"
)

// A Source's first call reserves a block of 8 and waits for it: the
// adapter counts one reservation "ok" of 8 IDs, its round trip, and one
// wait "ok". A Source on a schema with no install: one reservation
// "error" and one wait "error" (the caller got ErrNotInstalled).
func TestBlocks(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		reader := sdkmetric.NewManualReader()
		obs, err := otel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
		if err != nil {
			t.Fatal(err)
		}
		sdb := stdlib.OpenDBFromPool(db.Pool)
		defer sdb.Close()
		if _, err := migrations.Migrate(context.Background(), sdb); err != nil {
			t.Fatal(err)
		}
		src, err := blocks.New(sdb, blocks.WithSize(8), blocks.WithObserver(obs))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.New(); err != nil {
			t.Fatal(err)
		}
		src.Close()
		missing, err := blocks.New(sdb, blocks.WithSchema("no_such_schema"), blocks.WithObserver(obs))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := missing.New(); !errors.Is(err, blocks.ErrNotInstalled) {
			t.Fatalf("New on a schema with no install: %v, want ErrNotInstalled", err)
		}
		missing.Close()

		got := counts(t, reader)
		set := func(kv ...attribute.KeyValue) attribute.Distinct { s := attribute.NewSet(kv...); return s.Equivalent() }
		ok, failed := set(otel.OutcomeKey.String("ok")), set(otel.OutcomeKey.String("error"))
		for _, c := range []struct {
			name  string
			set   attribute.Distinct
			value float64
		}{
			{"ulidflake.block.reservations", ok, 1},
			{"ulidflake.block.reservations", failed, 1},
			{"ulidflake.block.reserved_ids", set(), 8},
			{"ulidflake.block.reserve.duration", set(), 2},
			{"ulidflake.block.refill_wait.duration", ok, 1},
			{"ulidflake.block.refill_wait.duration", failed, 1},
		} {
			if v, found := got[c.name][c.set]; v != c.value {
				t.Errorf("%s %v: %v (found %t), want %v", c.name, c.set, v, found, c.value)
			}
		}
	})
}
