SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);
-- Fails while a column still uses the domain: convert such columns to
-- bigint first (ALTER TABLE t ALTER COLUMN c TYPE bigint).
DROP DOMAIN ulid_flake_id;
