package moves_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/migrations"
)

// moved says what a move is expected to bring.
type moved struct {
	// whole: every table and sequence of the schema came with the move
	// (the migrations' own tables too), not only the install's tables.
	whole bool
	// ownState: dst has an install of its own (a subscriber), whose
	// generator state is its own from the start.
	ownState bool
	// noState: the move brings no generator state (a schema-only dump):
	// the extension's default fails until Migrate draws one (55000).
	noState bool
}

// snapshot is what a move must bring of a database: its catalog, and the
// contents of its relations (the install's tables; every table and
// sequence of the schema when the move is whole).
type snapshot struct {
	catalog  []string
	contents map[string]string
}

// snapshotOf takes src's snapshot.
func snapshotOf(t *testing.T, src *database, in install, whole bool) snapshot {
	t.Helper()
	var rels []string
	for _, tb := range in.tables {
		rels = append(rels, tb.name)
	}
	if whole {
		rels = relations(t, src, "r", "S")
	}
	s := snapshot{catalog: catalog(t, src), contents: map[string]string{}}
	for _, rel := range rels {
		s.contents[rel] = contents(t, src, rel)
	}
	return s
}

// checkMoved checks a move from src to dst, then makes IDs in dst:
//
//  1. dst has src's tables, views, indexes, constraints, column defaults,
//     functions and extensions, and the same rows in its tables (and
//     sequence values when the move is whole; views are the install's
//     check to read);
//  2. the defaults wait for Migrate unless dst has an install of its own:
//     the SQL functions' first ID checks the database, and the extension's
//     call reads the state, and both refuse (55000) a state recorded on
//     another system or database, and none;
//  3. migrations.Migrate, as dst's owner, succeeds, and afterwards every
//     version is recorded, the epoch is the source's, the generator state
//     names dst's system and database, and ulid_flake()
//     (and the extension's function) use the offset it records;
//  4. newRows more rows per table: no ID repeats, and every ID made after
//     the move sorts after every ID made before it.
func checkMoved(t *testing.T, src, dst *database, in install, m moved) {
	t.Helper()
	checkMovedFrom(t, snapshotOf(t, src, in, m.whole), dst, in, m)
}

// checkMovedFrom is checkMoved given the source's snapshot.
func checkMovedFrom(t *testing.T, want snapshot, dst *database, in install, m moved) {
	t.Helper()
	ctx := context.Background()

	got := catalog(t, dst)
	missing, extra := difference(want.catalog, got), difference(got, want.catalog)
	require.True(t, len(missing)+len(extra) == 0, "the schema did not come back whole:\nmissing:\n\t%s\nextra:\n\t%s",
		strings.Join(missing, "\n\t"), strings.Join(extra, "\n\t"))
	for rel, c := range want.contents {
		require.Equal(t, c, contents(t, dst, rel), "the rows of %s", rel)
	}

	here, _ := state(t, dst)
	require.Equal(t, m.ownState, here, "the generator state names the new database before Migrate (a move brings another's, or none)")

	// The defaults, before Migrate: they refuse (55000) a state recorded on
	// another system or database, and none.
	if err := fillErr(ctx, dst, in, "copy", earlyRows); err != nil || !m.ownState {
		if m.ownState {
			require.NoError(t, err, "the defaults, right after the move")
		}
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe, "a default made IDs before Migrate, from another database's state or none")
		require.Equal(t, "55000", pe.Code, "%v", err)
		t.Logf("the defaults before Migrate: %v", err)
	}

	steps, err := migrations.Migrate(ctx, dst.sdb, migrations.WithEpoch(epoch))
	require.NoError(t, err, "Migrate, with the source's epoch, on the moved database")
	t.Logf("Migrate: %d steps %v", len(steps), steps)
	all, err := migrations.All()
	require.NoError(t, err)
	var recorded int
	require.NoError(t, dst.pool.QueryRow(ctx, `SELECT count(*) FROM ulid_flake_migrations`).Scan(&recorded))
	require.Equal(t, len(all), recorded, "the versions Migrate records after the move")
	var ms int64
	require.NoError(t, dst.pool.QueryRow(ctx, `SELECT ulid_flake_epoch_ms()`).Scan(&ms))
	require.Equal(t, epoch.UnixMilli(), ms, "the epoch")
	here, offset := state(t, dst)
	require.True(t, here, "after Migrate, the generator state names another database: the offset was not drawn for this one")
	var again bool
	require.NoError(t, dst.pool.QueryRow(ctx, `SELECT ulid_flake_check_node()`).Scan(&again))
	require.False(t, again, "ulid_flake_check_node() drew again after Migrate")
	require.Equal(t, offset, generatorOffset(t, dst, `ulid_flake()`), "ulid_flake()'s offset is not the state's")
	if in.ext {
		require.Equal(t, offset, generatorOffset(t, dst, `ulid_flake_next(nextval('ulid_flake_seq'))`), "the extension's offset is not the state's")
	}

	require.NoError(t, fillErr(ctx, dst, in, "copy", newRows), "the defaults after Migrate")
	for _, tb := range in.tables {
		var rows, distinct, before, after int
		var ordered *bool
		require.NoError(t, dst.pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*), count(DISTINCT id),
				count(*) FILTER (WHERE made = 'source'), count(*) FILTER (WHERE made = 'copy'),
				min(id) FILTER (WHERE made = 'copy') > max(id) FILTER (WHERE made = 'source')
			FROM %s`, tb.name)).Scan(&rows, &distinct, &before, &after, &ordered))
		require.Equal(t, rows, distinct, "%s: IDs repeat", tb.name)
		require.GreaterOrEqual(t, before, sourceRows, tb.name)
		require.GreaterOrEqual(t, after, newRows, tb.name)
		require.NotNil(t, ordered, tb.name)
		require.True(t, *ordered, "%s: an ID made after the move sorts before one made before it", tb.name)
	}
	if in.check != nil {
		in.check(t, dst)
	}
}

// difference lists the elements of a that b lacks.
func difference(a, b []string) []string {
	var d []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			d = append(d, x)
		}
	}
	return d
}

// fillErr adds n rows marked made to every table of the install.
func fillErr(ctx context.Context, db *database, in install, made string, n int) error {
	var errs []error
	for _, tb := range in.tables {
		if _, err := db.pool.Exec(ctx, tb.fill, made, n); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", tb.name, err))
		}
	}
	return errors.Join(errs...)
}

// catalog lists what a move must bring: the relations of schema public
// (tables, views, sequences, indexes), its sequences' parameters, its
// functions with their volatility, strictness, parallel safety, security
// and settings (the pinned search_path), its constraints
// (NOT NULL aside: PostgreSQL 18 records them as constraints, earlier
// versions do not), its column defaults and generated columns, and the
// extensions.
func catalog(t *testing.T, db *database) []string {
	t.Helper()
	rows, err := db.pool.Query(context.Background(), `
		SELECT format('relation %s %s', c.relname, c.relkind) FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace
		UNION ALL SELECT format('function %s %s %s %s %s %s', p.oid::regprocedure, p.provolatile, p.proisstrict, p.proparallel, p.prosecdef, p.proconfig)
			FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
		UNION ALL SELECT format('sequence %s start %s increment %s min %s max %s cycle %s', s.seqrelid::regclass, s.seqstart, s.seqincrement, s.seqmin, s.seqmax, s.seqcycle)
			FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = 'public'::regnamespace
		UNION ALL SELECT format('constraint %s %s %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid))
			FROM pg_constraint c WHERE c.connamespace = 'public'::regnamespace AND c.contype <> 'n'
		UNION ALL SELECT format('default %s.%s %s %s', c.relname, a.attname, a.attgenerated, pg_get_expr(d.adbin, d.adrelid))
			FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum JOIN pg_class c ON c.oid = d.adrelid
			WHERE c.relnamespace = 'public'::regnamespace
		UNION ALL SELECT format('extension %s %s', e.extname, e.extversion) FROM pg_extension e
		ORDER BY 1`)
	require.NoError(t, err)
	list, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return list
}

// relations lists the relations of schema public of the given kinds.
func relations(t *testing.T, db *database, kinds ...string) []string {
	t.Helper()
	rows, err := db.pool.Query(context.Background(), `SELECT quote_ident(relname) FROM pg_class
		WHERE relnamespace = 'public'::regnamespace AND relkind::text = ANY ($1) ORDER BY 1`, kinds)
	require.NoError(t, err)
	list, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return list
}

// contents is a relation's row count and a hash of its rows (in their text
// form, sorted); of a sequence, its last value and whether it was called.
func contents(t *testing.T, db *database, rel string) string {
	t.Helper()
	ctx := context.Background()
	var kind, out string
	err := db.pool.QueryRow(ctx, `SELECT relkind::text FROM pg_class WHERE oid = $1::regclass`, rel).Scan(&kind)
	switch {
	case err != nil:
	case kind == "S":
		err = db.pool.QueryRow(ctx, fmt.Sprintf(`SELECT format('last_value %%s is_called %%s', last_value, is_called) FROM %s`, rel)).Scan(&out)
	default:
		err = db.pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) || ' rows ' || coalesce(md5(string_agg(x::text, E'\n' ORDER BY x::text)), '')
			FROM %s AS x`, rel)).Scan(&out)
	}
	require.NoError(t, err, "reading %s in %s", rel, db.name)
	return out
}

// state reports whether the generator state names this database (its
// system identifier and OID: the offset was drawn here), and the offset.
func state(t *testing.T, db *database) (here bool, offset int64) {
	t.Helper()
	err := db.pool.QueryRow(context.Background(), `SELECT s.system_id = c.system_identifier AND s.database_oid = d.oid, s."offset"
		FROM ulid_flake_state AS s, pg_control_system() AS c, pg_database AS d
		WHERE d.datname = current_database()`).Scan(&here, &offset)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, -1
	}
	require.NoError(t, err)
	return here, offset
}

// p is the period of the generators' sequence values: 2^20 - 1.
const p = 1<<20 - 1

// generatorOffset makes one ID with call (ulid_flake(), or the extension's
// ulid_flake_next(nextval(...))) and returns the offset it was made with:
// its low 20 bits are 32·x mod p, where x = (seq mod p + offset) mod p
// (docs/sql.md), and 2^15 is 32's inverse mod p.
func generatorOffset(t *testing.T, db *database, call string) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := db.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	var id, seq int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT `+call).Scan(&id))
	require.NoError(t, conn.QueryRow(ctx, `SELECT currval('ulid_flake_seq')`).Scan(&seq))
	x := ((id & (1<<20 - 1)) << 15) % p
	return ((x-seq%p)%p + p) % p
}
