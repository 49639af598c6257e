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

-- name: ListCustomersAfter :many
-- Keyset pagination with a typed cursor: after is a *idtype.CustomerID
-- (the nullable domain override), nil for the first page. A zero ID is
-- never written, so 0 sorts below every key.
SELECT * FROM customers
WHERE id > COALESCE(sqlc.narg(after)::customer_id, 0)
ORDER BY id LIMIT @page_size;

-- name: ListPostsAfter :many
-- The same with plain IDs: after is a ulidflake.NullID, not valid for the
-- first page.
SELECT * FROM posts
WHERE id > COALESCE(sqlc.narg(after)::ulid_flake_id, 0)
ORDER BY id LIMIT @page_size;

-- The functions of migrations/declarations.sql, each called as sqlc
-- reads it (TestQueriesCallEveryFunction checks that none is missing).

-- name: NewIDs :one
-- ulid_flake() on a node without a SID (a node with one refuses it,
-- 55U04), and the scalable layout with the call's SID.
SELECT ulid_flake()::ulid_flake_id AS id,
	ulid_flake_scalable(@sid)::ulid_flake_id AS scalable_with_sid;

-- name: NodeScalableID :one
-- ulid_flake_scalable() with the node's SID (ulid_flake_set_sid, the
-- owner's); refused (23514) on a node without one, as this example's.
SELECT ulid_flake_scalable()::ulid_flake_id AS id;

-- name: CustomerText :one
SELECT ulid_flake_encode(id) AS text, ulid_flake_encode(id, 'cus') AS prefixed,
	ulid_flake_time(id) AS created_at
FROM customers WHERE id = @id;

-- name: GetCustomerByText :one
SELECT * FROM customers WHERE id = ulid_flake_decode(@text);

-- name: GetCustomerByPrefixed :one
SELECT * FROM customers WHERE id = ulid_flake_decode(@prefixed, 'cus');

-- name: CreateCustomerAt :one
-- A backfill: the key carries created_at's time.
INSERT INTO customers (id, name) VALUES (ulid_flake_at(@created_at), @name) RETURNING *;

-- name: Generators :one
-- What the ID functions read: the epoch (Unix ms) and the SID in force.
-- sid is -1 on a node without one.
SELECT ulid_flake_epoch_ms() AS epoch_ms, COALESCE(ulid_flake_node_sid(), -1)::integer AS sid;

-- name: ReserveBlock :one
-- n IDs made by the database, ascending, for an application to hand out
-- (package blocks does this in Go): 1 to 65,536, else SQLSTATE 22023.
SELECT ulid_flake_block(@n)::ulid_flake_id[] AS ids;
