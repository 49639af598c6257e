-- ulidflake 009: ulid_flake_block(n), n new IDs in one call, for programs
-- that make IDs outside the database (package blocks: any number of
-- instances, each reserving blocks, with no SID and no configuration).
--
-- * The IDs are made by the generator that DEFAULT uses on this node:
--   ulid_flake() on a node with no SID, ulid_flake_scalable() with the
--   node's SID (ulid_flake_node_sid()) on a node that has one, as every
--   node of a mesh has. They draw from the one sequence, with the
--   install's offset, so a block's IDs differ from each other, from every
--   other block's and from the IDs the database makes by DEFAULT, as two
--   IDs the database makes differ (docs/guarantees.md): as long as fewer
--   than 2^15 are drawn on the node within one millisecond. A block's
--   IDs carry the database's clock when the call ran.
-- * The result is ordered: ascending, no NULL, n elements.
-- * n is 1 to 65536; another (NULL too) is refused with 22023.
-- * Any role may call it, as it may call ulid_flake() (EXECUTE to PUBLIC;
--   nextval needs the USAGE on the sequence that 001 grants to PUBLIC).
--   It runs as the caller. Its body is SQL-standard: the functions it
--   calls are bound by object id when it is created, so neither the
--   caller's search_path nor an overload made later (a defaulted
--   argument: ulid_flake(integer DEFAULT 0)) changes or stops it.
--
-- As in 004, 007 and 008, the file runs with search_path pinned to the
-- install schema.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- The install schema is the installer's alone (ulid_flake_alone, version 5).
SELECT ulid_flake_alone(pg_catalog.current_schema());

CREATE FUNCTION ulid_flake_block(n integer) RETURNS bigint[]
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN CASE WHEN n IS NULL OR n OPERATOR(pg_catalog.<) 1 OR n OPERATOR(pg_catalog.>) 65536
		THEN ulid_flake_raise('22023'::text, pg_catalog.format('ulid_flake_block: a block of %s IDs: want 1 to 65536',
			COALESCE(n::text, 'NULL'::text)), NULL::bigint[])
	ELSE (SELECT pg_catalog.array_agg(g.id ORDER BY g.id)
		FROM (SELECT CASE WHEN ulid_flake_node_sid() IS NULL THEN ulid_flake() ELSE ulid_flake_scalable(ulid_flake_node_sid()) END AS id
			FROM pg_catalog.generate_series(1, n) AS i) AS g) END;
GRANT EXECUTE ON FUNCTION ulid_flake_block(integer) TO PUBLIC;
