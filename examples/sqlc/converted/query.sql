-- name: CreateCustomer :one
INSERT INTO customers (name) VALUES (@name) RETURNING *;

-- name: CreateInvoice :one
INSERT INTO invoices (customer_id, replaces_id, total) VALUES (@customer_id, @replaces_id, @total) RETURNING *;

-- name: CreateInvoiceLine :one
INSERT INTO invoice_lines (invoice_id, amount) VALUES (@invoice_id, @amount) RETURNING *;

-- name: GetInvoice :one
SELECT * FROM invoices WHERE id = @id;

-- name: GetInvoiceByText :one
-- The prefixed text form, inv_00EZJCRCB4650, decoded by the server.
SELECT * FROM invoices WHERE id = ulid_flake_decode(@text, 'inv');

-- name: ListInvoicesAfter :many
-- Keyset pagination, one query for every page: after is a
-- *idtype.InvoiceID, nil for the first page (0 sorts below every key).
SELECT * FROM invoices
WHERE id > COALESCE(sqlc.narg(after)::invoice_id, 0)
ORDER BY id LIMIT @page_size;

-- name: ListInvoicesByIDs :many
-- A list of IDs: []ulidflake.ID (pgx cannot encode a slice of a
-- prefixed type; pass each one's ID).
SELECT * FROM invoices WHERE id = ANY(@ids::ulid_flake_id[]) ORDER BY id;

-- name: ListLinesAfter :many
-- The same with unprefixed IDs: after is a ulidflake.NullID.
SELECT * FROM invoice_lines
WHERE invoice_id = @invoice_id AND id > COALESCE(sqlc.narg(after)::ulid_flake_id, 0)
ORDER BY id LIMIT @page_size;

-- name: TotalsByCustomer :many
-- Through the view: its columns have overrides of their own.
SELECT * FROM invoice_totals WHERE customer_id = @customer_id ORDER BY invoice_id;
