-- ulidflake 005 down: drops ulid_flake_at.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

DROP FUNCTION ulid_flake_at(timestamp with time zone);
