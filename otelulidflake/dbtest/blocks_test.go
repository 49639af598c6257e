package dbtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ulidflake/ulidflake/blocks"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/otelulidflake"
)

// A Source's first call reserves a block of 8 and waits for it; the
// fourth reserves the next ahead, and the ninth ends the first block, used
// up: the adapter counts two reservations "ok" of 8 IDs each, their round
// trips, one wait "ok" and one block ended "used_up", with no namespace. A
// Source on a schema with no install: one reservation "error", its round
// trip, and one wait "error" (the caller got ErrNotInstalled).
func TestBlocks(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		set := func(kv ...attribute.KeyValue) attribute.Distinct { s := attribute.NewSet(kv...); return s.Equivalent() }
		reader := sdkmetric.NewManualReader()
		obs, err := otelulidflake.NewObserver(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
		if err != nil {
			t.Fatal(err)
		}
		sdb := stdlib.OpenDBFromPool(db.Pool)
		defer sdb.Close()
		if _, err := migrations.Migrate(context.Background(), sdb); err != nil {
			t.Fatal(err)
		}
		src, err := blocks.NewSource(sdb, blocks.WithSize(8), blocks.WithValidity(time.Minute), blocks.WithObserver(obs))
		if err != nil {
			t.Fatal(err)
		}
		take := func(n int) {
			for range n {
				if _, err := src.NewWait(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
		take(8)
		ok := set(otelulidflake.OutcomeKey.String("ok"))
		for deadline := time.Now().Add(time.Minute); counts(t, reader)["ulidflake.block.reservations"][ok] < 2; {
			if time.Now().After(deadline) {
				t.Fatal("no block reserved ahead")
			}
			time.Sleep(5 * time.Millisecond)
		}
		take(1)
		src.Close()
		missing, err := blocks.NewSource(sdb, blocks.WithSchema("no_such_schema"), blocks.WithObserver(obs))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := missing.NewWait(context.Background()); !errors.Is(err, migrations.ErrNotInstalled) {
			t.Fatalf("NewWait on a schema with no install: %v, want ErrNotInstalled", err)
		}
		missing.Close()

		got := counts(t, reader)
		failed := set(otelulidflake.OutcomeKey.String("error"))
		for _, c := range []struct {
			name  string
			set   attribute.Distinct
			value float64
		}{
			{"ulidflake.block.reservations", ok, 2},
			{"ulidflake.block.reservations", failed, 1},
			{"ulidflake.block.reserved_ids", set(), 16},
			{"ulidflake.block.reserve.duration", ok, 2},
			{"ulidflake.block.reserve.duration", failed, 1},
			{"ulidflake.block.ends", set(otelulidflake.BlockEndKey.String("used_up")), 1},
			{"ulidflake.block.wait.duration", ok, 1},
			{"ulidflake.block.wait.duration", failed, 1},
		} {
			if v, found := got[c.name][c.set]; v != c.value {
				t.Errorf("%s %v: %v (found %t), want %v", c.name, c.set, v, found, c.value)
			}
		}
	})
}
