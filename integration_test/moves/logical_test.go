package moves_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// streamedRows are rows the source adds once the subscription has copied
// the tables: they reach the subscriber by streaming, not the initial copy.
const streamedRows = 100

// TestLogicalReplication: each install's tables, published and subscribed
// to by a fresh database on the same server that has an install of its
// own (the migrations, the extension, the same tables): the initial copy
// and the rows streamed after it arrive, and the subscriber goes on making
// unique IDs that sort after the replicated ones.
func TestLogicalReplication(t *testing.T) {
	t.Parallel()
	servers := pgtest.Servers(t)
	requireContainers(t, servers)
	for _, s := range servers {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			for _, in := range installs {
				t.Run(in.name, func(t *testing.T) {
					t.Parallel()
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
					defer cancel()
					src := sourceDB(t, s, in)
					var level string
					require.NoError(t, src.pool.QueryRow(ctx, `SHOW wal_level`).Scan(&level))
					if level != "logical" {
						t.Skipf("%s runs with wal_level=%s, not logical", s.Name, level)
					}
					dst := installedDB(t, s, in)
					subscribe(t, src, dst, in)
					waitRows(ctx, t, src, dst, in)
					fill(t, src, in, "source", streamedRows)
					waitRows(ctx, t, src, dst, in)
					checkMoved(t, src, dst, in, moved{ownState: true})
				})
			}
		})
	}
}

// subscribe publishes the install's tables in src and subscribes dst to
// them. The slot is made first: CREATE SUBSCRIPTION that makes its slot on
// its own server waits for itself (PostgreSQL's documented hang). The
// subscription and the slot go when t ends, before the databases.
func subscribe(t *testing.T, src, dst *database, in install) {
	t.Helper()
	ctx := context.Background()
	slot := dst.name
	_, err := src.pool.Exec(ctx, fmt.Sprintf(`CREATE PUBLICATION moves FOR TABLE %s`, tableNames(in)))
	require.NoError(t, err)
	_, err = src.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, stmt := range []string{`ALTER SUBSCRIPTION moves DISABLE`, `ALTER SUBSCRIPTION moves SET (slot_name = NONE)`, `DROP SUBSCRIPTION moves`} {
			if _, err := dst.pool.Exec(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
		// The walsender stops after the subscription is disabled.
		for {
			_, err := src.pool.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, slot)
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Errorf("dropping the slot %s: %v", slot, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	_, err = dst.pool.Exec(ctx, fmt.Sprintf(`CREATE SUBSCRIPTION moves CONNECTION '%s' PUBLICATION moves WITH (create_slot = false, slot_name = '%s')`,
		strings.ReplaceAll(src.connInfo(t), "'", "''"), slot))
	require.NoError(t, err)
}

// waitRows waits until every table of dst holds as many rows as src's.
func waitRows(ctx context.Context, t *testing.T, src, dst *database, in install) {
	t.Helper()
	for {
		behind := ""
		for _, tb := range in.tables {
			var want, got int
			require.NoError(t, src.pool.QueryRow(ctx, `SELECT count(*) FROM `+tb.name).Scan(&want))
			require.NoError(t, dst.pool.QueryRow(ctx, `SELECT count(*) FROM `+tb.name).Scan(&got))
			if got != want {
				behind = fmt.Sprintf("%s: %d of %d rows", tb.name, got, want)
				break
			}
		}
		if behind == "" {
			return
		}
		var errs int64
		require.NoError(t, dst.pool.QueryRow(ctx, `SELECT coalesce(sum(e.value::bigint), 0) FROM pg_stat_subscription_stats AS s, jsonb_each_text(to_jsonb(s)) AS e
			WHERE e.key LIKE '%error_count'`).Scan(&errs))
		require.Zero(t, errs, "the subscription failed (%s)", behind)
		require.NoError(t, ctx.Err(), "the subscription did not catch up (%s)", behind)
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSubscribedStateRefused: a publication FOR ALL TABLES sends
// ulid_flake_state too, and a subscriber with an install of its own would
// take the publisher's offset and epoch with it. Migrate on the
// subscriber refuses (ErrMesh) while the state is subscribed, and
// passes once the publication names the tables.
func TestSubscribedStateRefused(t *testing.T) {
	t.Parallel()
	servers := pgtest.Servers(t)
	requireContainers(t, servers)
	for _, s := range servers {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			in := installs[0]
			src := sourceDB(t, s, in)
			var level string
			require.NoError(t, src.pool.QueryRow(ctx, `SHOW wal_level`).Scan(&level))
			if level != "logical" {
				t.Skipf("%s runs with wal_level=%s, not logical", s.Name, level)
			}
			dst := installedDB(t, s, in)
			_, err := src.pool.Exec(ctx, `CREATE PUBLICATION everything FOR ALL TABLES`)
			require.NoError(t, err)
			slot := dst.name + "_all"
			_, err = src.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot)
			require.NoError(t, err)
			t.Cleanup(func() {
				for _, stmt := range []string{`ALTER SUBSCRIPTION everything DISABLE`, `ALTER SUBSCRIPTION everything SET (slot_name = NONE)`, `DROP SUBSCRIPTION everything`} {
					_, _ = dst.pool.Exec(context.Background(), stmt)
				}
				for i := 0; i < 100; i++ {
					if _, err := src.pool.Exec(context.Background(), `SELECT pg_drop_replication_slot($1)`, slot); err == nil {
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			})
			_, err = dst.pool.Exec(ctx, fmt.Sprintf(`CREATE SUBSCRIPTION everything CONNECTION '%s' PUBLICATION everything WITH (create_slot = false, slot_name = '%s', copy_data = false)`,
				strings.ReplaceAll(src.connInfo(t), "'", "''"), slot))
			require.NoError(t, err)

			_, err = migrations.Migrate(ctx, dst.sdb, migrations.WithEpoch(epoch))
			require.ErrorIs(t, err, migrations.ErrMesh)
			require.ErrorContains(t, err, "ulid_flake_state is replicated into this database by subscription everything")

			_, err = src.pool.Exec(ctx, `DROP PUBLICATION everything; CREATE PUBLICATION everything FOR TABLE `+tableNames(in))
			require.NoError(t, err)
			_, err = dst.pool.Exec(ctx, `ALTER SUBSCRIPTION everything REFRESH PUBLICATION WITH (copy_data = false)`)
			require.NoError(t, err)
			_, err = migrations.Migrate(ctx, dst.sdb, migrations.WithEpoch(epoch))
			require.NoError(t, err)
		})
	}
}
