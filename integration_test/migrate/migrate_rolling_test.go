package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// newerRelease stands in for a later ulidflake release that knows one
// version more than this build: it applies the versions this build knows,
// then version latest+1 the way Migrate does (its own transaction, the
// advisory lock, the version row).
func newerRelease(ctx context.Context, db *sql.DB) error {
	if _, err := migrations.Migrate(ctx, db); err != nil && !errors.Is(err, migrations.ErrAhead) {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_catalog.pg_advisory_xact_lock(8461253679858344299)`); err != nil {
		return err
	}
	v := migrations.Latest() + 1
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS ulid_flake_future (n int)`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(
		`INSERT INTO ulid_flake_migrations (version, name) VALUES (%d, 'future') ON CONFLICT DO NOTHING`, v)); err != nil {
		return err
	}
	return tx.Commit()
}

// TestMigrateRollingDeploy: callers of two releases at once. This build's
// Migrate runs 20 times while a newer release (one version more) migrates
// the same database: no call panics; each succeeds (it ran before the newer
// version landed) or returns ErrAhead naming both versions, having changed
// nothing; Down and To from this build then refuse, and the database keeps
// the newer release's version.
func TestMigrateRollingDeploy(t *testing.T) {
	t.Parallel()
	latest := migrations.Latest()
	pgtest.Run(t, func(t *testing.T, pdb *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		db := stdlib.OpenDBFromPool(pdb.Pool)
		defer db.Close()
		if _, err := migrations.Migrate(ctx, db, migrations.WithTarget(latest-2)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 20)
		for i := range errs {
			wg.Go(func() { _, errs[i] = migrations.Migrate(ctx, db) })
			if i == len(errs)/2 {
				wg.Go(func() {
					if err := newerRelease(ctx, db); err != nil {
						t.Errorf("newer release: %v", err)
					}
				})
			}
		}
		wg.Wait()
		for i, err := range errs {
			var ahead *migrations.AheadError
			if err != nil && !(errors.As(err, &ahead) && errors.Is(err, migrations.ErrAhead) &&
				ahead.Database == latest+1 && ahead.Build == latest && ahead.Op == "up") {
				t.Errorf("caller %d: %v", i, err)
			}
		}
		// Every call from now on finds the database ahead.
		if steps, err := migrations.Migrate(ctx, db); !errors.Is(err, migrations.ErrAhead) || len(steps) != 0 {
			t.Errorf("Up on a database ahead: %v, %v", steps, err)
		}
		for _, opt := range []migrations.Option{migrations.WithDirection(migrations.DirectionDown), migrations.WithTarget(1), migrations.WithTarget(latest)} {
			steps, err := migrations.Migrate(ctx, db, opt)
			var ahead *migrations.AheadError
			if !errors.As(err, &ahead) || len(steps) != 0 || ahead.Op == "up" || ahead.Database != latest+1 || ahead.Build != latest {
				t.Errorf("Down/To on a database ahead: %v, %v", steps, err)
			}
		}
		var v int
		if err := db.QueryRow(`SELECT max(version) FROM ulid_flake_migrations`).Scan(&v); err != nil || v != latest+1 {
			t.Fatalf("version %d after the refusals, %v", v, err)
		}
		var fn int
		if err := db.QueryRow(`SELECT count(*) FROM pg_proc WHERE proname = 'ulid_flake'`).Scan(&fn); err != nil || fn != 1 {
			t.Fatalf("ulid_flake() after the refusals: %d, %v", fn, err)
		}
	})
}
