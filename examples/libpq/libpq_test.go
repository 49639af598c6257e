package libpqexample

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }

func newID(t *testing.T) ulidflake.ID {
	t.Helper()
	id, err := ulidflake.New()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestLibPQ(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, tdb *pgtest.DB) {
		ctx := context.Background()
		db, err := sql.Open("postgres", tdb.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, Schema); err != nil {
			t.Fatal(err)
		}
		start := time.Now()

		// Single, from DEFAULT ulid_flake() and from Go.
		a1, err := CreateAuthor(ctx, db, "db-made")
		if err != nil || a1.IsZero() {
			t.Fatalf("CreateAuthor = %d, %v", a1, err)
		}
		goID := newID(t)
		if _, err := db.ExecContext(ctx, `INSERT INTO authors (id, name) VALUES ($1, $2)`, goID, "go-made"); err != nil {
			t.Fatal(err)
		}
		// Bulk, both ways.
		var dbMade []ulidflake.ID
		rows, err := db.QueryContext(ctx, `INSERT INTO authors (name) SELECT unnest($1::text[]) RETURNING id`, pq.Array([]string{"b1", "b2"}))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id ulidflake.ID
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			dbMade = append(dbMade, id)
		}
		if err := rows.Err(); err != nil || len(dbMade) != 2 {
			t.Fatalf("bulk RETURNING: %v, %v", dbMade, err)
		}
		goMade := []Author{{newID(t), "g1"}, {newID(t), "g2"}}
		if err := CreateAuthorsWithIDs(ctx, db, goMade); err != nil {
			t.Fatal(err)
		}
		ids := []ulidflake.ID{a1, goID, dbMade[0], dbMade[1], goMade[0].ID, goMade[1].ID}
		seen := map[ulidflake.ID]bool{}
		for _, id := range ids {
			if id.IsZero() || seen[id] {
				t.Fatalf("zero or duplicate ID in %v", ids)
			}
			seen[id] = true
		}

		// Read by ID and by a list of IDs.
		var name string
		if err := db.QueryRowContext(ctx, `SELECT name FROM authors WHERE id = $1`, goID).Scan(&name); err != nil || name != "go-made" {
			t.Fatalf("by ID: %q, %v", name, err)
		}
		list, err := AuthorsByIDs(ctx, db, ids)
		want := slices.Clone(ids)
		slices.Sort(want)
		if err != nil || len(list) != len(want) {
			t.Fatalf("by IDs: %v, %v", list, err)
		}
		for i := range list {
			if list[i].ID != want[i] {
				t.Fatalf("by IDs [%d] = %d, want %d", i, list[i].ID, want[i])
			}
		}

		// The zero ID as a query bound: ulidflake.Bound pages from the start;
		// the ID itself is refused, with an error that says so.
		page, err := AuthorsAfter(ctx, db, 0, 4)
		if err != nil || len(page) != 4 || page[0].ID != want[0] {
			t.Fatalf("first page: %v, %v", page, err)
		}
		page, err = AuthorsAfter(ctx, db, page[3].ID, 4)
		if err != nil || len(page) != 2 || page[1].ID != want[5] {
			t.Fatalf("second page: %v, %v", page, err)
		}
		if _, err := db.QueryContext(ctx, `SELECT id FROM authors WHERE id > $1`, ulidflake.ID(0)); !errors.Is(err, ulidflake.ErrZeroID) {
			t.Fatalf("zero ID as a parameter: %v, want ErrZeroID", err)
		}

		// A nullable reference: NullID in and out.
		var p1, p2 ulidflake.ID
		if err := db.QueryRowContext(ctx, `INSERT INTO posts (author_id, title) VALUES ($1, 'by a1') RETURNING id`,
			ulidflake.NullID{ID: a1, Valid: true}).Scan(&p1); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, `INSERT INTO posts (author_id, title) VALUES ($1, 'anonymous') RETURNING id`,
			ulidflake.NullID{}).Scan(&p2); err != nil {
			t.Fatal(err)
		}
		for id, wantAuthor := range map[ulidflake.ID]ulidflake.NullID{p1: {ID: a1, Valid: true}, p2: {}} {
			var got ulidflake.NullID
			if err := db.QueryRowContext(ctx, `SELECT author_id FROM posts WHERE id = $1`, id).Scan(&got); err != nil || got != wantAuthor {
				t.Fatalf("post %s author = %+v, %v; want %+v", id, got, err, wantAuthor)
			}
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO posts (author_id, title) VALUES ($1, 'bad')`, ulidflake.NullID{Valid: true}); !errors.Is(err, ulidflake.ErrZeroID) {
			t.Fatalf("valid zero NullID: %v, want ErrZeroID", err)
		}
		// NULL into a plain ID is refused, not read as zero.
		var id ulidflake.ID
		if err := db.QueryRowContext(ctx, `SELECT author_id FROM posts WHERE id = $1`, p2).Scan(&id); !errors.Is(err, flake.ErrNull) {
			t.Fatalf("NULL into ID: %v, want ErrNull", err)
		}
		end := time.Now()

		// A time range on the key.
		in, err := PostIDsBetween(ctx, db, start.Add(-time.Second), end.Add(time.Second))
		if err != nil || len(in) != 2 || in[0] != min(p1, p2) {
			t.Fatalf("posts in range: %v, %v", in, err)
		}
		for _, id := range append(ids, p1, p2) {
			if ulidflake.DefaultEpoch().Time(id).Before(start.Truncate(time.Millisecond).Add(-time.Millisecond)) || ulidflake.DefaultEpoch().Time(id).After(end.Add(time.Millisecond)) {
				t.Errorf("ID %s has time %v, outside [%v, %v]", id, ulidflake.DefaultEpoch().Time(id), start, end)
			}
		}
		out, err := PostIDsBetween(ctx, db, start.Add(-time.Hour), start.Add(-time.Minute))
		if err != nil || len(out) != 0 {
			t.Fatalf("posts an hour ago: %v, %v", out, err)
		}
	})
}
