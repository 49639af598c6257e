// Package libpqexample shows Ulid-Flake IDs with database/sql and lib/pq:
// ulidflake.ID and ulidflake.NullID are driver.Valuer and sql.Scanner, so
// they go in and out of queries as bigint with no registration. Lists of IDs
// go through pq.Array.
//
// A zero ID is never written: ID.Value refuses it (ulidflake.ErrZeroID). As a
// query bound (keyset pagination from the start: WHERE id > $1), pass
// ulidflake.Bound(id), which writes the zero ID as 0.
package libpqexample

import (
	"context"
	"database/sql"
	"time"

	"github.com/lib/pq"

	"github.com/ulidflake/ulidflake"
)

// Schema creates the example's tables; the ulidflake migrations must run first.
const Schema = `
CREATE TABLE authors (
	id   bigint PRIMARY KEY DEFAULT ulid_flake(),
	name text NOT NULL
);
CREATE TABLE posts (
	id        bigint PRIMARY KEY DEFAULT ulid_flake(),
	author_id bigint REFERENCES authors (id), -- nullable
	title     text NOT NULL
);`

// Author is a row of authors.
type Author struct {
	ID   ulidflake.ID
	Name string
}

// CreateAuthor inserts an author with the ID from DEFAULT ulid_flake().
func CreateAuthor(ctx context.Context, db *sql.DB, name string) (ulidflake.ID, error) {
	var id ulidflake.ID
	err := db.QueryRowContext(ctx, `INSERT INTO authors (name) VALUES ($1) RETURNING id`, name).Scan(&id)
	return id, err
}

// CreateAuthorsWithIDs inserts authors whose IDs were made in Go, in one
// statement.
func CreateAuthorsWithIDs(ctx context.Context, db *sql.DB, authors []Author) error {
	ids := make([]ulidflake.ID, len(authors))
	names := make([]string, len(authors))
	for i, a := range authors {
		ids[i], names[i] = a.ID, a.Name
	}
	_, err := db.ExecContext(ctx, `INSERT INTO authors (id, name) SELECT unnest($1::bigint[]), unnest($2::text[])`,
		pq.Array(ids), pq.Array(names))
	return err
}

// AuthorsByIDs reads the authors with the given IDs, in ID order.
func AuthorsByIDs(ctx context.Context, db *sql.DB, ids []ulidflake.ID) ([]Author, error) {
	return authors(db.QueryContext(ctx, `SELECT id, name FROM authors WHERE id = ANY($1::bigint[]) ORDER BY id`, pq.Array(ids)))
}

// AuthorsAfter is keyset pagination: the next limit authors after the ID
// after (the zero ID for the first page).
func AuthorsAfter(ctx context.Context, db *sql.DB, after ulidflake.ID, limit int) ([]Author, error) {
	return authors(db.QueryContext(ctx, `SELECT id, name FROM authors WHERE id > $1 ORDER BY id LIMIT $2`, ulidflake.Bound(after), limit))
}

// PostIDsBetween returns the IDs of the posts made between since and until,
// a range on the primary key.
func PostIDsBetween(ctx context.Context, db *sql.DB, since, until time.Time) ([]ulidflake.ID, error) {
	rows, err := db.QueryContext(ctx, `SELECT id FROM posts WHERE id BETWEEN ulid_flake_min($1) AND ulid_flake_max($2) ORDER BY id`, since, until)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []ulidflake.ID
	for rows.Next() {
		var id ulidflake.ID
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func authors(rows *sql.Rows, err error) ([]Author, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Author
	for rows.Next() {
		var a Author
		if err := rows.Scan(&a.ID, &a.Name); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
