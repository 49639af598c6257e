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
