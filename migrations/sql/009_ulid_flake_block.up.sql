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
--   It runs as the caller, with search_path = pg_catalog, pg_temp, and
--   calls the generators by their schema-qualified names, so neither the
--   caller's search_path nor an object planted elsewhere changes it.
--
-- As in 004, 007 and 008, the file runs with search_path pinned to the
-- install schema, and the schema's name reaches SQL only as a format()
-- argument.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

DO $install$
BEGIN
	EXECUTE pg_catalog.format($f$CREATE FUNCTION %1$I.ulid_flake_block(n integer) RETURNS bigint[]
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS %2$L$f$,
		pg_catalog.current_schema(), pg_catalog.format($body$
DECLARE
	sid integer;
	ids bigint[];
BEGIN
	IF n IS NULL OR n < 1 OR n > 65536 THEN
		RAISE EXCEPTION 'ulid_flake_block: a block of %% IDs: want 1 to 65536', coalesce(n::text, 'NULL')
			USING ERRCODE = '22023', HINT = 'Ask for at most 65536 IDs per call; call it again for more.';
	END IF;
	sid := %1$I.ulid_flake_node_sid();
	IF sid IS NULL THEN
		SELECT array_agg(g.id ORDER BY g.id) INTO ids
		FROM (SELECT %1$I.ulid_flake() AS id FROM generate_series(1, n)) AS g;
	ELSE
		SELECT array_agg(g.id ORDER BY g.id) INTO ids
		FROM (SELECT %1$I.ulid_flake_scalable(sid) AS id FROM generate_series(1, n)) AS g;
	END IF;
	RETURN ids;
END$body$, pg_catalog.current_schema()));
	EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %I.ulid_flake_block(integer) TO PUBLIC', pg_catalog.current_schema());
END
$install$;
