-- A schema that began with bigserial keys and was moved to Ulid-Flake by
-- `ulidflake convert` (docs/bigserial.md): the conversion changes the
-- keys' DEFAULT, not their type, so sqlc reads the tables as they were
-- created, plain bigint, and a view over them keeps them so. sqlc.yaml maps
-- the ID columns by column overrides instead of the domain ulid_flake_id.
CREATE TABLE customers (
	id   bigserial PRIMARY KEY,
	name text NOT NULL
);

CREATE TABLE invoices (
	id          bigserial PRIMARY KEY,
	customer_id bigint NOT NULL REFERENCES customers (id),
	replaces_id bigint REFERENCES invoices (id), -- nullable: a correction names the invoice it replaces
	total       integer NOT NULL
);

CREATE TABLE invoice_lines (
	id         bigserial PRIMARY KEY,
	invoice_id bigint NOT NULL REFERENCES invoices (id),
	amount     integer NOT NULL
);

CREATE VIEW invoice_totals AS
SELECT i.id AS invoice_id, i.customer_id, coalesce(sum(l.amount), 0)::integer AS lines_total
FROM invoices AS i LEFT JOIN invoice_lines AS l ON l.invoice_id = i.id
GROUP BY i.id, i.customer_id;

-- One domain per prefixed type, for what a column override cannot reach:
-- casts. sqlc.narg(after)::invoice_id, the keyset cursor, is a
-- *idtype.InvoiceID, nil for the first page. No column changes type.
CREATE DOMAIN customer_id AS ulid_flake_id;
CREATE DOMAIN invoice_id AS ulid_flake_id;
