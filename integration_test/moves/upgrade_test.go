package moves_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestPgUpgrade: a cluster of the oldest server version (15) with each
// install in a database of its own, upgraded with the newest version's
// pg_upgrade (copy mode) in one container that has both releases
// (pgtest.NewUpgrade): every database comes back whole and goes on
// making unique IDs that sort after the old ones (checkMovedFrom), the
// extension's default included.
func TestPgUpgrade(t *testing.T) {
	pgtest.Heavy(t) // before the versions: a skip names all it needs
	t.Parallel()
	servers := pgtest.Servers(t)
	requireContainers(t, servers)
	oldest := slices.MinFunc(servers, func(a, b *pgtest.Server) int { return a.Major - b.Major })
	newest := slices.MaxFunc(servers, func(a, b *pgtest.Server) int { return a.Major - b.Major })
	if oldest.Major == newest.Major {
		t.Skipf("one server version (%d): set %s to two or more, as %s=15,18", oldest.Major, pgtest.EnvImages, pgtest.EnvImages)
	}
	t.Run(fmt.Sprintf("%s_to_%s", oldest.Name, newest.Name), func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		u := pgtest.NewUpgrade(t, oldest.Major, newest.Major)
		var version int
		require.NoError(t, queryURL(ctx, u.URL, `SELECT current_setting('server_version_num')::int / 10000`, &version))
		require.Equal(t, oldest.Major, version, "the server before the upgrade")
		snaps := map[string]snapshot{}
		for _, in := range installs {
			name := "upgraded_" + in.name
			require.NoError(t, execURL(ctx, u.URL, `CREATE DATABASE `+name))
			src := openURL(t, u.URL, name)
			installIn(t, src, in)
			fill(t, src, in, "source", sourceRows)
			snaps[in.name] = snapshotOf(t, src, in, true)
			src.pool.Close()
		}
		out, err := u.Run(ctx)
		require.NoError(t, err, "pg_upgrade")
		t.Logf("pg_upgrade: %s", out)
		for _, in := range installs {
			t.Run(in.name, func(t *testing.T) {
				dst := openURL(t, u.URL, "upgraded_"+in.name)
				var version int
				require.NoError(t, dst.pool.QueryRow(ctx, `SELECT current_setting('server_version_num')::int / 10000`).Scan(&version))
				require.Equal(t, newest.Major, version)
				checkMovedFrom(t, snaps[in.name], dst, in, moved{whole: true})
			})
		}
	})
}

// openURL opens database name on the server of the maintenance URL u.
func openURL(t *testing.T, u, name string) *database {
	t.Helper()
	p, err := url.Parse(u)
	require.NoError(t, err)
	p.Path = "/" + name
	pl := pool(t, p.String())
	return &database{name: name, url: p.String(), pool: pl, sdb: stdDB(t, pl)}
}

// queryURL scans the one value that sql returns on the database of URL u.
func queryURL(ctx context.Context, u, sql string, dst any) error {
	p, err := pgxpool.New(ctx, u)
	if err != nil {
		return err
	}
	defer p.Close()
	return p.QueryRow(ctx, sql).Scan(dst)
}

// execURL runs sql on the database of URL u.
func execURL(ctx context.Context, u, sql string) error {
	p, err := pgxpool.New(ctx, u)
	if err != nil {
		return err
	}
	defer p.Close()
	_, err = p.Exec(ctx, sql)
	return err
}
