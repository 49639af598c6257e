package bunexample

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/pgxtype"
)

func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }

func open(t *testing.T, db *pgtest.DB) *bun.DB {
	t.Helper()
	cfg, err := pgx.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	bdb := bun.NewDB(stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(pgxtype.AfterConnect)), pgdialect.New())
	t.Cleanup(func() { bdb.Close() })
	if err := CreateTables(context.Background(), bdb); err != nil {
		t.Fatal(err)
	}
	return bdb
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

func TestBun(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		bdb := open(t, db)
		var def string
		if err := bdb.QueryRowContext(ctx, `SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'authors'::regclass`).Scan(&def); err != nil || def != "ulid_flake()" {
			t.Fatalf("authors.id default = %q, %v", def, err)
		}
		start := time.Now()

		// Single and bulk, IDs from DEFAULT ulid_flake() through RETURNING.
		a := &Author{Name: "db-made"}
		if _, err := bdb.NewInsert().Model(a).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		bulk := []Author{{Name: "b1"}, {Name: "b2"}, {Name: "b3"}}
		if _, err := bdb.NewInsert().Model(&bulk).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		// An Author with an ID made in Go keeps it.
		goID, err := ulidflake.New()
		if err != nil {
			t.Fatal(err)
		}
		g := &Author{ID: goID, Name: "go-made"}
		if _, err := bdb.NewInsert().Model(g).Exec(ctx); err != nil || g.ID != goID {
			t.Fatalf("insert with a Go ID: %d, %v", g.ID, err)
		}
		ids := []ulidflake.ID{a.ID, bulk[0].ID, bulk[1].ID, bulk[2].ID, g.ID}
		distinct(t, ids)

		// Posts: IDs from the hook, single and bulk; a NULL and a set reference.
		p := &Post{Title: "anonymous"}
		if _, err := bdb.NewInsert().Model(p).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		posts := []Post{{Title: "p1", AuthorID: ulidflake.NullID{ID: a.ID, Valid: true}}, {Title: "p2", AuthorID: ulidflake.NullID{ID: g.ID, Valid: true}}}
		if _, err := bdb.NewInsert().Model(&posts).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		postIDs := []ulidflake.ID{p.ID, posts[0].ID, posts[1].ID}
		distinct(t, append(slices.Clone(ids), postIDs...))
		end := time.Now()
		for _, id := range append(slices.Clone(ids), postIDs...) {
			if ulidflake.DefaultEpoch().Time(id).Before(start.Truncate(time.Millisecond).Add(-time.Millisecond)) || ulidflake.DefaultEpoch().Time(id).After(end.Add(time.Millisecond)) {
				t.Errorf("ID %s has time %v, outside [%v, %v]", id, ulidflake.DefaultEpoch().Time(id), start, end)
			}
		}

		// Read by ID, by a list of IDs, with the nullable reference.
		var got Author
		if err := bdb.NewSelect().Model(&got).Where("id = ?", a.ID).Scan(ctx); err != nil || got.ID != a.ID || got.Name != "db-made" {
			t.Fatalf("by ID: %+v, %v", got, err)
		}
		var list []Author
		if err := bdb.NewSelect().Model(&list).Where("id IN (?)", bun.List(ids)).Order("id").Scan(ctx); err != nil || len(list) != len(ids) {
			t.Fatalf("by IDs: %+v, %v", list, err)
		}
		want := slices.Clone(ids)
		slices.Sort(want)
		for i := range list {
			if list[i].ID != want[i] {
				t.Fatalf("by IDs [%d] = %d, want %d", i, list[i].ID, want[i])
			}
		}
		var withAuthors []Post
		if err := bdb.NewSelect().Model(&withAuthors).Relation("Author").Order("post.id").Scan(ctx); err != nil || len(withAuthors) != 3 {
			t.Fatalf("posts with authors: %+v, %v", withAuthors, err)
		}
		for _, wp := range withAuthors {
			switch wp.ID {
			case p.ID:
				if wp.AuthorID.Valid || (wp.Author != nil && !wp.Author.ID.IsZero()) {
					t.Errorf("anonymous post has author %+v %+v", wp.AuthorID, wp.Author)
				}
			case posts[0].ID:
				if wp.AuthorID != (ulidflake.NullID{ID: a.ID, Valid: true}) || wp.Author == nil || wp.Author.ID != a.ID {
					t.Errorf("p1 author %+v %+v", wp.AuthorID, wp.Author)
				}
			}
		}

		// A time range on the key.
		var inRange []Post
		if err := bdb.NewSelect().Model(&inRange).
			Where("id BETWEEN ulid_flake_min(?) AND ulid_flake_max(?)", start.Add(-time.Second), end.Add(time.Second)).
			Scan(ctx); err != nil || len(inRange) != 3 {
			t.Fatalf("time range: %+v, %v", inRange, err)
		}
		var before []Post
		if err := bdb.NewSelect().Model(&before).
			Where("id BETWEEN ulid_flake_min(?) AND ulid_flake_max(?)", start.Add(-time.Hour), start.Add(-time.Minute)).
			Scan(ctx); err != nil || len(before) != 0 {
			t.Fatalf("time range an hour ago: %+v, %v", before, err)
		}

		// Updating keeps the ID; a reference to a zero ID is refused in Go.
		p.Title = "renamed"
		if _, err := bdb.NewUpdate().Model(p).WherePK().Exec(ctx); err != nil {
			t.Fatal(err)
		}
		bad := &Post{Title: "bad", AuthorID: ulidflake.NullID{Valid: true}}
		if _, err := bdb.NewInsert().Model(bad).Exec(ctx); !errors.Is(err, ulidflake.ErrZeroID) {
			t.Fatalf("zero author ID: %v, want ErrZeroID", err)
		}
		// Without such a check, a zero ID still never reaches the database:
		// the statement fails, as a syntax error.
		var none []Author
		err = bdb.NewSelect().Model(&none).Where("id = ?", ulidflake.ID(0)).Scan(ctx)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42601" {
			t.Fatalf("zero ID as a bound: %v, want a syntax error (42601)", err)
		}
		var n int
		if err := bdb.NewSelect().Model((*Post)(nil)).ColumnExpr("count(*)").Scan(ctx, &n); err != nil || n != 3 {
			t.Fatalf("posts: %d, %v", n, err)
		}
	})
}
