SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

DROP FUNCTION ulid_flake_decode(text, text);
DROP FUNCTION ulid_flake_encode(bigint, text);
