-- The example's tables. ulid_flake_id (migrations version 2) marks every
-- ID column, so that sqlc's db_type overrides in sqlc.yaml map exactly
-- these columns (arrays and nullable ones included) to ulidflake types,
-- and leave other bigint columns alone.
CREATE TABLE authors (
	id   ulid_flake_id PRIMARY KEY DEFAULT ulid_flake(),
	name text NOT NULL
);

CREATE TABLE posts (
	id        ulid_flake_id PRIMARY KEY DEFAULT ulid_flake(),
	author_id ulid_flake_id REFERENCES authors (id), -- nullable: a post may have no author
	title     text NOT NULL,
	views     bigint NOT NULL DEFAULT 0               -- a bigint that is not an ID
);

-- A prefixed key: sqlc.yaml's column overrides map customers.id and
-- invoices.customer_id to idtype.CustomerID (cus_00EZJCRCB4650). A column
-- override ignores nullability: customer_id is NOT NULL. The domain
-- customer_id types what a column override cannot reach, casts: the
-- first-page cursor sqlc.narg(after)::customer_id (*idtype.CustomerID).
CREATE DOMAIN customer_id AS ulid_flake_id;

CREATE TABLE customers (
	id   ulid_flake_id PRIMARY KEY DEFAULT ulid_flake(),
	name text NOT NULL
);

CREATE TABLE invoices (
	id          ulid_flake_id PRIMARY KEY DEFAULT ulid_flake(),
	customer_id ulid_flake_id NOT NULL REFERENCES customers (id),
	total       integer NOT NULL
);
