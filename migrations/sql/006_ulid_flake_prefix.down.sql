SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- The install schema is the installer's alone (ulid_flake_alone, version 5).
SELECT ulid_flake_alone(pg_catalog.current_schema());

DROP FUNCTION ulid_flake_decode(text, text);
DROP FUNCTION ulid_flake_encode(bigint, text);
