-- Fails while a column still uses the domain: convert such columns to
-- bigint first (ALTER TABLE t ALTER COLUMN c TYPE bigint).
DROP DOMAIN ulid_flake_id;
