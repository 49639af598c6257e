-- ulidflake 005: ulid_flake_at(t), IDs for a given time, for backfills
-- (INSERT ... SELECT ulid_flake_at(created_at) FROM old_table).
--
-- ulid_flake_at(t) is the ID ulid_flake() would make if the clock read t:
-- t's millisecond (as ulid_flake_min(t) computes it, with its range check)
-- above the low 20 bits of one ulid_flake() call. The low bits come from
-- the shared sequence, so IDs of one millisecond never repeat, whether
-- made by ulid_flake_at, ulid_flake() or ulid_flake_scalable, as long as
-- fewer than 2^15 of them (2^20 - 1 when only stand-alone ones are made)
-- are drawn between the first and the last call for that millisecond:
-- see docs/backfill.md. STRICT: a NULL time gives NULL, never an ID.
--
-- As in 004, the body is SQL-standard with qualified operators and
-- functions, created with search_path pinned to the install schema.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

DO $install$
BEGIN
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %1$I.ulid_flake_at(t timestamp with time zone) RETURNS bigint
		LANGUAGE sql VOLATILE STRICT PARALLEL UNSAFE
		RETURN GREATEST(%1$I.ulid_flake_min(t) OPERATOR(pg_catalog.|) (%1$I.ulid_flake() OPERATOR(pg_catalog.&) 1048575::bigint), 1::bigint)',
		pg_catalog.current_schema());
END
$install$;
