-- The example's tables: an invoicing schema with plain bigint keys. The
-- ulidflake migrations (migrations.Migrate) must run first: they create
-- ulid_flake().
CREATE TABLE customers (
	id   bigint PRIMARY KEY DEFAULT ulid_flake(), -- CustomerID, made by PostgreSQL
	name text NOT NULL
);

CREATE TABLE invoices (
	id          bigint PRIMARY KEY DEFAULT ulid_flake(), -- InvoiceID, made in Go
	customer_id bigint NOT NULL REFERENCES customers (id),
	total       integer NOT NULL
);

CREATE TABLE invoice_lines (
	id         bigint PRIMARY KEY DEFAULT ulid_flake(), -- a plain ulidflake.ID
	invoice_id bigint NOT NULL REFERENCES invoices (id),
	item       text NOT NULL
);
