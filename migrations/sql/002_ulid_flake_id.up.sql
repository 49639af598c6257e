SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);
-- ulidflake 002: the domain ulid_flake_id, a bigint that holds a Ulid-Flake
-- ID. Declaring key and reference columns with it (id ulid_flake_id PRIMARY
-- KEY DEFAULT ulid_flake()) stores and indexes exactly as bigint, and lets
-- code generators that map by type (sqlc's db_type overrides) tell IDs from
-- other bigint columns, arrays and nullable columns included.
--
-- It refuses negative values: an ID's sign bit is always 0. Zero passes
-- (0 is a valid lower bound in queries); the Go types refuse to write it.
-- pgxtype.AfterConnect registers the domain and its array type on each
-- connection, by OID.
CREATE DOMAIN ulid_flake_id AS bigint
	CONSTRAINT "ulid_flake_id: negative value" CHECK (VALUE >= 0);
