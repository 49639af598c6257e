package moves_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// restore is one way to dump a database and restore the dump: the
// commands it runs, in the container of the server it restores onto.
type restore struct {
	name string
	// noOwner restores as the new database's owner, a role that is not a
	// superuser (as on a managed service), and runs Migrate as that role.
	noOwner bool
	// cmds are the commands, given src's and dst's connection strings and
	// a path for the dump in the container.
	cmds func(src, dst, file string) [][]string
}

// psql runs a script as the docs say to: stop at the first error. Query
// results go nowhere; notices and errors are the output.
func psql(db, file string) []string {
	return []string{"psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-o", "/dev/null", "-d", db, "-f", file}
}

var (
	plainPsql = restore{name: "plain_psql", cmds: func(src, dst, f string) [][]string {
		return [][]string{{"pg_dump", "-Fp", "-f", f, "-d", src}, psql(dst, f)}
	}}
	customPgRestore = restore{name: "custom_pg_restore", cmds: func(src, dst, f string) [][]string {
		return [][]string{{"pg_dump", "-Fc", "-f", f, "-d", src}, {"pg_restore", "-d", dst, f}}
	}}
	customNoOwner = restore{name: "custom_pg_restore_no_owner", noOwner: true, cmds: func(src, dst, f string) [][]string {
		return [][]string{{"pg_dump", "-Fc", "-f", f, "-d", src}, {"pg_restore", "--no-owner", "-d", dst, f}}
	}}
	customSections = restore{name: "custom_pg_restore_sections", cmds: func(src, dst, f string) [][]string {
		return [][]string{{"pg_dump", "-Fc", "-f", f, "-d", src},
			{"pg_restore", "--section=pre-data", "-d", dst, f},
			{"pg_restore", "--section=data", "-d", dst, f},
			{"pg_restore", "--section=post-data", "-d", dst, f}}
	}}
	customPsql = restore{name: "custom_psql", cmds: func(src, dst, f string) [][]string {
		return [][]string{{"pg_dump", "-Fc", "-f", f, "-d", src}, {"pg_restore", "-f", f + ".sql", f}, psql(dst, f+".sql")}
	}}
	directoryJobs = restore{name: "directory_pg_restore_j2", cmds: func(src, dst, f string) [][]string {
		return [][]string{{"pg_dump", "-Fd", "-j", "2", "-f", f, "-d", src}, {"pg_restore", "-j", "2", "-d", dst, f}}
	}}
)

// TestDumpRestore: each install, dumped with pg_dump in plain, custom and
// directory formats and restored with psql and pg_restore into a fresh
// database on the same server, comes back whole and goes on making unique
// IDs that sort after the old ones (checkMoved). A quick run spreads the
// ways over the installs (pgtest.Spread).
func TestDumpRestore(t *testing.T) {
	t.Parallel()
	servers := pgtest.Servers(t)
	requireContainers(t, servers)
	for _, s := range servers {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			for i, in := range installs {
				t.Run(in.name, func(t *testing.T) {
					t.Parallel()
					src := sourceDB(t, s, in)
					// A quick run moves each install with a third of the
					// ways, every way once; CI every install every way.
					for _, r := range pgtest.Spread(restores, i, len(installs)) {
						t.Run(r.name, func(t *testing.T) { moveWith(t, src, s, in, r) })
					}
				})
			}
		})
	}
}

// TestDumpRestoreAcrossVersions: each install on the oldest server (15),
// dumped with the newest server's pg_dump (as PostgreSQL advises for an
// upgrade) and restored there, as TestDumpRestore checks.
func TestDumpRestoreAcrossVersions(t *testing.T) {
	t.Parallel()
	servers := pgtest.Servers(t)
	requireContainers(t, servers)
	oldest := slices.MinFunc(servers, func(a, b *pgtest.Server) int { return a.Major - b.Major })
	newest := slices.MaxFunc(servers, func(a, b *pgtest.Server) int { return a.Major - b.Major })
	if oldest.Major == newest.Major {
		t.Skipf("one server version (%d): set %s to two or more, as %s=15,18", oldest.Major, pgtest.EnvImages, pgtest.EnvImages)
	}
	t.Run(fmt.Sprintf("%s_to_%s", oldest.Name, newest.Name), func(t *testing.T) {
		for _, in := range installs {
			t.Run(in.name, func(t *testing.T) {
				t.Parallel()
				src := sourceDB(t, oldest, in)
				for _, r := range []restore{plainPsql, customPgRestore, directoryJobs} {
					t.Run(r.name, func(t *testing.T) { moveWith(t, src, newest, in, r) })
				}
			})
		}
	})
}

// restores are the ways TestDumpRestore moves each install.
var restores = []restore{plainPsql, customPgRestore, customNoOwner, customSections, customPsql, directoryJobs}

// moveWith moves src to a fresh database on s with r, and checks the move.
func moveWith(t *testing.T, src *database, s *pgtest.Server, in install, r restore) {
	var dst *database
	if r.noOwner {
		owner, password := role(t, s)
		dst = freshDB(t, s, owner, password)
	} else {
		dst = freshDB(t, s, "", "")
	}
	file := "/tmp/" + dst.name
	run(t, s, r.cmds(src.connInfo(t), dst.connInfo(t), file)...)
	_, err := s.Command(context.Background(), "rm", "-rf", file, file+".sql")
	require.NoError(t, err)
	checkMoved(t, src, dst, in, moved{whole: true})
}

// run runs commands in s's container, one after the other, and reports
// (without stopping t) the first that fails: what the restore then lost
// is for the checks to say.
func run(t *testing.T, s *pgtest.Server, cmds ...[]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, cmd := range cmds {
		if out, err := s.Command(ctx, cmd...); err != nil {
			t.Errorf("%s failed: %v", cmd[0], err)
			return
		} else if strings.TrimSpace(out) != "" {
			t.Logf("%s: %s", cmd[0], out)
		}
	}
}

// TestSchemaOnlyThenCopy: each install's schema, dumped with pg_dump -s
// and restored with psql into a fresh database, then its tables' rows
// copied with COPY, before Migrate runs: the database has no generator
// state and a sequence that starts again, and still goes on making unique
// IDs that sort after the old ones.
func TestSchemaOnlyThenCopy(t *testing.T) {
	t.Parallel()
	servers := pgtest.Servers(t)
	requireContainers(t, servers)
	for _, s := range servers {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			for _, in := range installs {
				t.Run(in.name, func(t *testing.T) {
					t.Parallel()
					src := sourceDB(t, s, in)
					dst := freshDB(t, s, "", "")
					file := "/tmp/" + dst.name + ".sql"
					run(t, s, []string{"pg_dump", "-Fp", "--schema-only", "-f", file, "-d", src.connInfo(t)}, psql(dst.connInfo(t), file), []string{"rm", "-f", file})
					for _, tb := range in.tables {
						copyTable(t, src, dst, tb)
					}
					var stateRows int
					require.NoError(t, dst.pool.QueryRow(context.Background(), `SELECT count(*) FROM ulid_flake_state`).Scan(&stateRows))
					require.Zero(t, stateRows, "a schema-only dump carried the generator state")
					checkMoved(t, src, dst, in, moved{noState: true})
				})
			}
		})
	}
}

// copyTable copies a table's rows from src to dst with COPY, through this
// process.
func copyTable(t *testing.T, src, dst *database, tb table) {
	t.Helper()
	ctx := context.Background()
	from, err := src.pool.Acquire(ctx)
	require.NoError(t, err)
	defer from.Release()
	to, err := dst.pool.Acquire(ctx)
	require.NoError(t, err)
	defer to.Release()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := from.Conn().PgConn().CopyTo(ctx, pw, fmt.Sprintf(`COPY (SELECT %s FROM %s) TO STDOUT`, tb.cols, tb.name))
		pw.CloseWithError(err)
		done <- err
	}()
	tag, err := to.Conn().PgConn().CopyFrom(ctx, pr, fmt.Sprintf(`COPY %s (%s) FROM STDIN`, tb.name, tb.cols))
	pr.CloseWithError(err)
	require.NoError(t, <-done, "COPY %s TO", tb.name)
	require.NoError(t, err, "COPY %s FROM", tb.name)
	require.Equal(t, int64(sourceRows), tag.RowsAffected(), tb.name)
}
