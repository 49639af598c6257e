-- ulidflake 009 down: drops ulid_flake_block. IDs it made stay unique:
-- they came from the sequence, which stays.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- The install schema is the installer's alone (ulid_flake_alone, version 5).
SELECT ulid_flake_alone(pg_catalog.current_schema());

DROP FUNCTION ulid_flake_block(integer);
