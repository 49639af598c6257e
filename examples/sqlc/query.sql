-- name: CreateAuthor :one
-- The ID comes from DEFAULT ulid_flake().
INSERT INTO authors (name) VALUES (@name) RETURNING *;

-- name: CreateAuthorWithID :one
-- The ID is made in Go (ulidflake.New()).
INSERT INTO authors (id, name) VALUES (@id, @name) RETURNING *;

-- name: CreateAuthors :many
-- Bulk: one row per name, IDs from DEFAULT ulid_flake().
INSERT INTO authors (name) SELECT unnest(@names::text[]) RETURNING *;

-- name: CreateAuthorsWithIDs :exec
-- Bulk with IDs made in Go: the ID array is typed by the domain.
INSERT INTO authors (id, name) SELECT unnest(@ids::ulid_flake_id[]), unnest(@names::text[]);

-- name: GetAuthor :one
SELECT * FROM authors WHERE id = @id;

-- name: ListAuthorsByIDs :many
SELECT * FROM authors WHERE id = ANY(@ids::ulid_flake_id[]) ORDER BY id;

-- name: CreatePost :one
INSERT INTO posts (author_id, title) VALUES (@author_id, @title) RETURNING *;

-- name: GetPost :one
SELECT * FROM posts WHERE id = @id;

-- name: ListPostsBetween :many
-- A time range on the key: IDs sort by creation time, so the bounds are
-- ulid_flake_min/ulid_flake_max of the times and the primary-key index
-- serves the range.
SELECT * FROM posts
WHERE id BETWEEN ulid_flake_min(@since::timestamptz) AND ulid_flake_max(@until::timestamptz)
ORDER BY id;

-- name: PostIDsByAuthor :many
-- An array of IDs in a result: ulid_flake_id[] scans into []ulidflake.ID
-- (pgx: with pgxtype.AfterConnect, which registers the domain's array type).
SELECT author_id, array_agg(id ORDER BY id)::ulid_flake_id[] AS post_ids
FROM posts WHERE author_id IS NOT NULL
GROUP BY author_id ORDER BY author_id;

-- name: CreateCustomer :one
-- A prefixed key (idtype.CustomerID) from DEFAULT ulid_flake().
INSERT INTO customers (name) VALUES (@name) RETURNING *;

-- name: CreateCustomerWithID :one
INSERT INTO customers (id, name) VALUES (@id, @name) RETURNING *;

-- name: GetCustomer :one
SELECT * FROM customers WHERE id = @id;

-- name: CreateInvoice :one
INSERT INTO invoices (customer_id, total) VALUES (@customer_id, @total) RETURNING *;

-- name: GetInvoice :one
-- The override follows customers.id through the join and its alias.
SELECT i.id, i.total, c.id AS customer_id, c.name AS customer_name
FROM invoices i JOIN customers c ON c.id = i.customer_id
WHERE i.id = @id;

-- name: ListInvoicesByCustomer :many
SELECT * FROM invoices WHERE customer_id = @customer_id ORDER BY id;
