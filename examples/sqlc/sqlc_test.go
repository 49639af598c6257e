package sqlcexample

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	_ "github.com/lib/pq"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/sqlc/dbpgx"
	"github.com/ulidflake/ulidflake/examples/sqlc/dbstd"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/pgxtype"
)

func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }

// The overrides map only ulid_flake_id columns: plain bigint stays int64.
var _ int64 = dbpgx.Post{}.Views + dbstd.Post{}.Views

func withSchema(t *testing.T, db *pgtest.DB) {
	t.Helper()
	if _, err := db.Exec(context.Background(), Schema); err != nil {
		t.Fatal(err)
	}
}

// within checks that every ID's time lies between the millisecond before
// start and the one after end (the server and the test share the clock).
func within(t *testing.T, start, end time.Time, ids ...ulidflake.ID) {
	t.Helper()
	lo, hi := start.Truncate(time.Millisecond).Add(-time.Millisecond), end.Add(time.Millisecond)
	for _, id := range ids {
		if id.IsZero() || ulidflake.DefaultEpoch().Time(id).Before(lo) || ulidflake.DefaultEpoch().Time(id).After(hi) {
			t.Errorf("ID %s (%d) has time %v, outside [%v, %v]", id, id.Int64(), ulidflake.DefaultEpoch().Time(id), lo, hi)
		}
	}
}

// newID makes an ID in Go.
func newID(t *testing.T) ulidflake.ID {
	t.Helper()
	id, err := ulidflake.New()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func distinct(t *testing.T, ids []ulidflake.ID) {
	t.Helper()
	seen := map[ulidflake.ID]bool{}
	for _, id := range ids {
		if id.IsZero() || seen[id] {
			t.Fatalf("zero or duplicate ID %d in %v", id, ids)
		}
		seen[id] = true
	}
}

// TestPgx runs the pgx/v5 output in every query exec mode.
func TestPgx(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		withSchema(t, db)
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
			pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
			t.Run(mode.String(), func(t *testing.T) { testPgx(t, db, mode) })
		}
	})
}

func testPgx(t *testing.T, db *pgtest.DB, mode pgx.QueryExecMode) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.DefaultQueryExecMode = mode
	cfg.AfterConnect = pgxtype.AfterConnect // registers ulid_flake_id and ulid_flake_id[]
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	q := dbpgx.New(pool)
	start := time.Now()

	// Single: ID from DEFAULT ulid_flake(), and from Go.
	a1, err := q.CreateAuthor(ctx, "db-made")
	if err != nil {
		t.Fatal(err)
	}
	goID := newID(t)
	a2, err := q.CreateAuthorWithID(ctx, dbpgx.CreateAuthorWithIDParams{ID: goID, Name: "go-made"})
	if err != nil || a2.ID != goID {
		t.Fatalf("CreateAuthorWithID = %+v, %v; want ID %d", a2, err, goID)
	}
	// Bulk, both ways.
	bulk, err := q.CreateAuthors(ctx, []string{"b1", "b2", "b3"})
	if err != nil || len(bulk) != 3 {
		t.Fatalf("CreateAuthors = %v, %v", bulk, err)
	}
	goIDs := []ulidflake.ID{newID(t), newID(t)}
	if err := q.CreateAuthorsWithIDs(ctx, dbpgx.CreateAuthorsWithIDsParams{Ids: goIDs, Names: []string{"g1", "g2"}}); err != nil {
		t.Fatal(err)
	}
	ids := []ulidflake.ID{a1.ID, a2.ID, bulk[0].ID, bulk[1].ID, bulk[2].ID, goIDs[0], goIDs[1]}
	distinct(t, ids)

	// Read by ID and by a list of IDs.
	got, err := q.GetAuthor(ctx, a1.ID)
	if err != nil || got != a1 {
		t.Fatalf("GetAuthor = %+v, %v; want %+v", got, err, a1)
	}
	list, err := q.ListAuthorsByIDs(ctx, ids)
	if err != nil || len(list) != len(ids) {
		t.Fatalf("ListAuthorsByIDs = %v, %v", list, err)
	}
	want := slices.Clone(ids)
	slices.Sort(want)
	for i, a := range list {
		if a.ID != want[i] {
			t.Fatalf("ListAuthorsByIDs[%d] = %d, want %d", i, a.ID, want[i])
		}
	}

	// A nullable reference.
	p1, err := q.CreatePost(ctx, dbpgx.CreatePostParams{AuthorID: ulidflake.NullID{ID: a2.ID, Valid: true}, Title: "by go-made"})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := q.CreatePost(ctx, dbpgx.CreatePostParams{Title: "anonymous"})
	if err != nil {
		t.Fatal(err)
	}
	if g, err := q.GetPost(ctx, p1.ID); err != nil || g.AuthorID != (ulidflake.NullID{ID: a2.ID, Valid: true}) {
		t.Fatalf("GetPost(p1) = %+v, %v", g, err)
	}
	if g, err := q.GetPost(ctx, p2.ID); err != nil || g.AuthorID.Valid {
		t.Fatalf("GetPost(p2) = %+v, %v; want a NULL author", g, err)
	}
	// An array of IDs in a result.
	p3, err := q.CreatePost(ctx, dbpgx.CreatePostParams{AuthorID: ulidflake.NullID{ID: a2.ID, Valid: true}, Title: "also by go-made"})
	if err != nil {
		t.Fatal(err)
	}
	byAuthor, err := q.PostIDsByAuthor(ctx) // the database may hold other tests' rows
	i := slices.IndexFunc(byAuthor, func(r dbpgx.PostIDsByAuthorRow) bool { return r.AuthorID == ulidflake.NullID{ID: a2.ID, Valid: true} })
	if err != nil || i < 0 || !slices.Equal(byAuthor[i].PostIds, []ulidflake.ID{min(p1.ID, p3.ID), max(p1.ID, p3.ID)}) {
		t.Fatalf("PostIDsByAuthor = %+v, %v; want author %d with posts %d, %d", byAuthor, err, a2.ID, p1.ID, p3.ID)
	}
	end := time.Now()
	within(t, start, end, append(ids, p1.ID, p2.ID, p3.ID)...)

	// A time range on the key.
	in, err := q.ListPostsBetween(ctx, dbpgx.ListPostsBetweenParams{
		Since: pgtype.Timestamptz{Time: start.Add(-time.Second), Valid: true},
		Until: pgtype.Timestamptz{Time: end.Add(time.Second), Valid: true},
	})
	if err != nil || len(in) < 2 || !slices.ContainsFunc(in, func(p dbpgx.Post) bool { return p.ID == p1.ID }) {
		t.Fatalf("ListPostsBetween(now) = %+v, %v", in, err)
	}
	out, err := q.ListPostsBetween(ctx, dbpgx.ListPostsBetweenParams{
		Since: pgtype.Timestamptz{Time: start.Add(-time.Hour), Valid: true},
		Until: pgtype.Timestamptz{Time: start.Add(-time.Minute), Valid: true},
	})
	if err != nil || len(out) != 0 {
		t.Fatalf("ListPostsBetween(an hour ago) = %+v, %v", out, err)
	}

	// Never written: the zero ID (refused in Go), a negative one
	// (refused by the domain).
	if _, err := q.CreateAuthorWithID(ctx, dbpgx.CreateAuthorWithIDParams{Name: "zero"}); !errors.Is(err, ulidflake.ErrZeroID) {
		t.Fatalf("zero ID: %v, want ErrZeroID", err)
	}
	checkDomainRefusesNegative(t, db)
}

func checkDomainRefusesNegative(t *testing.T, db *pgtest.DB) {
	t.Helper()
	_, err := db.Exec(context.Background(), `INSERT INTO authors (id, name) VALUES (-5, 'negative')`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
		t.Fatalf("negative ID: %v, want check_violation 23514", err)
	}
}

// TestDatabaseSQL runs the database/sql output on lib/pq and on pgx's stdlib.
func TestDatabaseSQL(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		withSchema(t, db)
		pgxConfig, err := pgxpool.ParseConfig(db.URL)
		if err != nil {
			t.Fatal(err)
		}
		for name, open := range map[string]func() (*sql.DB, error){
			"libpq": func() (*sql.DB, error) { return sql.Open("postgres", db.URL) },
			"pgx-stdlib": func() (*sql.DB, error) {
				return stdlib.OpenDB(*pgxConfig.ConnConfig, stdlib.OptionAfterConnect(pgxtype.AfterConnect)), nil
			},
		} {
			t.Run(name, func(t *testing.T) {
				sdb, err := open()
				if err != nil {
					t.Fatal(err)
				}
				defer sdb.Close()
				testDatabaseSQL(t, dbstd.New(sdb))
			})
		}
		checkDomainRefusesNegative(t, db)
	})
}

func testDatabaseSQL(t *testing.T, q *dbstd.Queries) {
	ctx := context.Background()
	start := time.Now()
	a1, err := q.CreateAuthor(ctx, "db-made")
	if err != nil {
		t.Fatal(err)
	}
	goID := newID(t)
	a2, err := q.CreateAuthorWithID(ctx, dbstd.CreateAuthorWithIDParams{ID: goID, Name: "go-made"})
	if err != nil || a2.ID != goID {
		t.Fatalf("CreateAuthorWithID = %+v, %v; want ID %d", a2, err, goID)
	}
	bulk, err := q.CreateAuthors(ctx, []string{"b1", "b2", "b3"})
	if err != nil || len(bulk) != 3 {
		t.Fatalf("CreateAuthors = %v, %v", bulk, err)
	}
	goIDs := []ulidflake.ID{newID(t), newID(t)}
	if err := q.CreateAuthorsWithIDs(ctx, dbstd.CreateAuthorsWithIDsParams{Ids: goIDs, Names: []string{"g1", "g2"}}); err != nil {
		t.Fatal(err)
	}
	ids := []ulidflake.ID{a1.ID, a2.ID, bulk[0].ID, bulk[1].ID, bulk[2].ID, goIDs[0], goIDs[1]}
	distinct(t, ids)

	got, err := q.GetAuthor(ctx, a1.ID)
	if err != nil || got != a1 {
		t.Fatalf("GetAuthor = %+v, %v; want %+v", got, err, a1)
	}
	list, err := q.ListAuthorsByIDs(ctx, ids)
	if err != nil || len(list) != len(ids) {
		t.Fatalf("ListAuthorsByIDs = %v, %v", list, err)
	}
	want := slices.Clone(ids)
	slices.Sort(want)
	for i, a := range list {
		if a.ID != want[i] {
			t.Fatalf("ListAuthorsByIDs[%d] = %d, want %d", i, a.ID, want[i])
		}
	}

	p1, err := q.CreatePost(ctx, dbstd.CreatePostParams{AuthorID: ulidflake.NullID{ID: a2.ID, Valid: true}, Title: "by go-made"})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := q.CreatePost(ctx, dbstd.CreatePostParams{Title: "anonymous"})
	if err != nil {
		t.Fatal(err)
	}
	if g, err := q.GetPost(ctx, p1.ID); err != nil || g.AuthorID != (ulidflake.NullID{ID: a2.ID, Valid: true}) {
		t.Fatalf("GetPost(p1) = %+v, %v", g, err)
	}
	if g, err := q.GetPost(ctx, p2.ID); err != nil || g.AuthorID.Valid {
		t.Fatalf("GetPost(p2) = %+v, %v; want a NULL author", g, err)
	}
	// An array of IDs in a result.
	p3, err := q.CreatePost(ctx, dbstd.CreatePostParams{AuthorID: ulidflake.NullID{ID: a2.ID, Valid: true}, Title: "also by go-made"})
	if err != nil {
		t.Fatal(err)
	}
	byAuthor, err := q.PostIDsByAuthor(ctx) // the database may hold other tests' rows
	i := slices.IndexFunc(byAuthor, func(r dbstd.PostIDsByAuthorRow) bool { return r.AuthorID == ulidflake.NullID{ID: a2.ID, Valid: true} })
	if err != nil || i < 0 || !slices.Equal(byAuthor[i].PostIds, []ulidflake.ID{min(p1.ID, p3.ID), max(p1.ID, p3.ID)}) {
		t.Fatalf("PostIDsByAuthor = %+v, %v; want author %d with posts %d, %d", byAuthor, err, a2.ID, p1.ID, p3.ID)
	}
	end := time.Now()
	within(t, start, end, append(ids, p1.ID, p2.ID, p3.ID)...)

	in, err := q.ListPostsBetween(ctx, dbstd.ListPostsBetweenParams{Since: start.Add(-time.Second), Until: end.Add(time.Second)})
	if err != nil || len(in) < 2 || !slices.ContainsFunc(in, func(p dbstd.Post) bool { return p.ID == p1.ID }) {
		t.Fatalf("ListPostsBetween(now) = %+v, %v", in, err)
	}
	out, err := q.ListPostsBetween(ctx, dbstd.ListPostsBetweenParams{Since: start.Add(-time.Hour), Until: start.Add(-time.Minute)})
	if err != nil || len(out) != 0 {
		t.Fatalf("ListPostsBetween(an hour ago) = %+v, %v", out, err)
	}
	if _, err := q.CreateAuthorWithID(ctx, dbstd.CreateAuthorWithIDParams{Name: "zero"}); !errors.Is(err, ulidflake.ErrZeroID) {
		t.Fatalf("zero ID: %v, want ErrZeroID", err)
	}
}
