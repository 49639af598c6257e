-- ulidflake 005 down: back to version 4, whose functions read the settings
-- ulid_flake.epoch_ms and ulid_flake.sid at every call. Refused (55000
-- epoch, 55U06 SID) unless the settings give every session what version 5
-- fixed: the epoch, and the SID (ALTER DATABASE ... SET ulid_flake.sid says
-- it, and no role's setting says another).
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);
SELECT ulid_flake_alone(pg_catalog.current_schema());

DO $check$
DECLARE
	installed bigint;
	sid       integer := ulid_flake_node_sid();
	clash     text;
BEGIN
	-- The state's row lock orders this with ulid_flake_set_epoch().
	PERFORM FROM ulid_flake_state FOR UPDATE;
	installed := ulid_flake_epoch_ms();
	IF EXISTS (SELECT FROM ulid_flake_settings('ulid_flake.epoch_ms') AS s WHERE s.value IS NULL) THEN
		RAISE EXCEPTION 'ulid_flake: role % may not read the server''s configuration files (pg_file_settings), where ulid_flake.epoch_ms may give sessions another epoch', CURRENT_USER
			USING ERRCODE = '42501',
				HINT = pg_catalog.format('Run this as a superuser, or have one run GRANT SELECT ON pg_catalog.pg_file_settings TO %1$I; GRANT EXECUTE ON FUNCTION pg_catalog.pg_show_all_file_settings() TO %1$I; and run it again.', CURRENT_USER);
	END IF;
	SELECT pg_catalog.string_agg(s.who OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||) COALESCE(NULLIF(s.value, ''), '1704067200000'), '; ') INTO clash
	FROM (SELECT x.* FROM ulid_flake_settings('ulid_flake.epoch_ms') AS x WHERE x.per_role
		UNION ALL (SELECT x.* FROM ulid_flake_settings('ulid_flake.epoch_ms') AS x WHERE NOT x.per_role ORDER BY x.rank LIMIT 1)) AS s
	WHERE (CASE WHEN s.value OPERATOR(pg_catalog.=) '' THEN 1704067200000
		WHEN s.value OPERATOR(pg_catalog.~) E'^\\s*[+-]?[0-9]{1,18}\\s*$' THEN pg_catalog.regexp_replace(s.value, E'\\s', '', 'g')::bigint END) IS DISTINCT FROM installed;
	IF clash IS NOT NULL THEN
		RAISE EXCEPTION 'ulid_flake: the epoch is % Unix ms, and version 4 reads the epoch from the setting ulid_flake.epoch_ms at every call, which would give sessions another (%)', installed, clash
			USING ERRCODE = '55000',
				HINT = pg_catalog.format('ALTER DATABASE %I SET ulid_flake.epoch_ms = %s (and make the others say it, or RESET them), then migrate down', pg_catalog.current_database(), installed);
	END IF;
	SELECT pg_catalog.string_agg(s.who OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||) s.value, '; ') INTO clash
	FROM ulid_flake_settings('ulid_flake.sid') AS s
	WHERE pg_catalog.starts_with(s.who, 'ALTER '::text) AND (CASE WHEN s.value OPERATOR(pg_catalog.~) E'^\\s*[+]?[0-9]{1,9}\\s*$'
		THEN pg_catalog.regexp_replace(s.value, E'[\\s+]', '', 'g')::integer END) IS DISTINCT FROM sid;
	IF clash IS NOT NULL OR (sid IS NOT NULL AND NOT EXISTS (SELECT FROM ulid_flake_settings('ulid_flake.sid') AS s
			WHERE s.who OPERATOR(pg_catalog.=) 'ALTER DATABASE' AND s.value OPERATOR(pg_catalog.=) sid::text)) THEN
		RAISE EXCEPTION 'ulid_flake: the node''s SID is %, and version 4 reads the SID from the setting ulid_flake.sid, which would give sessions another (%)', COALESCE(sid::text, 'none'), COALESCE(clash, 'no ALTER DATABASE setting')
			USING ERRCODE = '55U06',
				HINT = CASE WHEN sid IS NULL THEN 'RESET the settings of ulid_flake.sid, then migrate down.'
					ELSE pg_catalog.format('ALTER DATABASE %I SET ulid_flake.sid = %s (and RESET the others), then migrate down.', pg_catalog.current_database(), sid) END;
	END IF;
END
$check$;

DROP FUNCTION ulid_flake_at(timestamp with time zone), ulid_flake_block(integer), ulid_flake_encode(bigint, text), ulid_flake_decode(text, text),
	ulid_flake_set_epoch(bigint, boolean), ulid_flake_set_sid(integer), ulid_flake_new_node(integer), ulid_flake_retire_node(uuid);
ALTER DOMAIN ulid_flake_timestamp RENAME CONSTRAINT "ulid_flake: clock outside the epoch range (ulid_flake_epoch_ms)"
	TO "ulid_flake: clock outside the epoch range (ulid_flake.epoch_ms)";
ALTER DOMAIN ulid_flake_sid RENAME CONSTRAINT "no SID: give ulid_flake_scalable(sid) or ulid_flake_set_sid(n)"
	TO "no SID: give ulid_flake_scalable(sid) or SET ulid_flake.sid";

-- Version 4's functions, as 004 made them, and its ID functions with the
-- recorded offset.
DO $install$
DECLARE
	schema text := pg_catalog.current_schema();
	-- The settings' values, read as ulid_flake.epoch_ms and checked only
	-- when they are set.
	epoch  text := pg_catalog.format('COALESCE(NULLIF(pg_catalog.current_setting(%L::text, true), %L::text)::%I.ulid_flake_epoch_setting::bigint, 1704067200000::bigint)',
		'ulid_flake.epoch_ms', '', pg_catalog.current_schema());
	-- t's millisecond from the epoch, exactly (numeric).
	tms    text := pg_catalog.format('(pg_catalog.floor(EXTRACT(epoch FROM t) OPERATOR(pg_catalog.*) 1000::numeric)::bigint OPERATOR(pg_catalog.-) %s)', epoch);
	bound  text;
BEGIN
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_time(id bigint) RETURNS timestamp with time zone
		LANGUAGE sql STABLE STRICT PARALLEL SAFE
		RETURN %L::timestamp with time zone OPERATOR(pg_catalog.+)
			((%s OPERATOR(pg_catalog.+) ((id OPERATOR(pg_catalog.>>) 20) OPERATOR(pg_catalog.&) 8796093022207::bigint))::double precision
			OPERATOR(pg_catalog.*) %L::interval)',
		schema, '1970-01-01 00:00:00+00', epoch, '1 millisecond');

	-- min and max: the smallest and the largest ID of t's millisecond.
	bound := $b$RETURN CASE
		WHEN NOT pg_catalog.isfinite(t) THEN %1$I.ulid_flake_raise('22003'::text,
			pg_catalog.format('ulid_flake: time out of range: %%s is not a finite time', t), NULL::bigint)
		WHEN %2$s OPERATOR(pg_catalog.<) 0::bigint OR %2$s OPERATOR(pg_catalog.>) 8796093022207::bigint THEN %1$I.ulid_flake_raise('22003'::text,
			pg_catalog.format('ulid_flake: time out of range: %%s is %%s ms from the epoch, not between 0 and 8796093022207', t, %2$s), NULL::bigint)
		ELSE (%2$s OPERATOR(pg_catalog.<<) 20) OPERATOR(pg_catalog.|) %3$s::bigint
	END$b$;
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_min(t timestamp with time zone) RETURNS bigint
		LANGUAGE sql STABLE STRICT PARALLEL SAFE ', schema) OPERATOR(pg_catalog.||) pg_catalog.format(bound, schema, tms, 0);
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_max(t timestamp with time zone) RETURNS bigint
		LANGUAGE sql STABLE STRICT PARALLEL SAFE ', schema) OPERATOR(pg_catalog.||) pg_catalog.format(bound, schema, tms, 1048575);

	-- ulid_flake_build(offset): (re)creates the ID functions with offset and
	-- records it with the node it is drawn on.
	EXECUTE pg_catalog.format($f$CREATE OR REPLACE FUNCTION %1$I.ulid_flake_build(new_offset bigint) RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS %2$L$f$, schema, pg_catalog.format($body$
DECLARE
	schema text := %1$L;
	x      text;
	ms     text;
BEGIN
	IF new_offset IS NULL OR new_offset < 0 OR new_offset >= 1048575 THEN
		RAISE EXCEPTION 'ulid_flake: offset %% not in 0..1048574', new_offset USING ERRCODE = '22003';
	END IF;
	x  := format('((pg_catalog.nextval(%%L::regclass) OPERATOR(pg_catalog.%%%%) 1048575::bigint) OPERATOR(pg_catalog.+) %%s::bigint) OPERATOR(pg_catalog.%%%%) 1048575::bigint',
		format('%%I.ulid_flake_seq', schema), new_offset);
	ms := format('((pg_catalog.floor(pg_catalog.date_part(%%L::text, pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000::double precision)::bigint OPERATOR(pg_catalog.-) %%s)::%%I.ulid_flake_timestamp::bigint OPERATOR(pg_catalog.<<) 20)',
		'epoch', %2$L, schema);
	EXECUTE format('CREATE OR REPLACE FUNCTION %%I.ulid_flake() RETURNS bigint LANGUAGE sql VOLATILE PARALLEL UNSAFE
		RETURN GREATEST(%%s OPERATOR(pg_catalog.|) (((%%s) OPERATOR(pg_catalog.*) 32::bigint) OPERATOR(pg_catalog.%%%%) 1048575::bigint), 1::bigint)',
		schema, ms, x);
	EXECUTE format('CREATE OR REPLACE FUNCTION %%I.ulid_flake_scalable(sid integer DEFAULT NULL) RETURNS bigint LANGUAGE sql VOLATILE PARALLEL UNSAFE
		RETURN GREATEST(%%s OPERATOR(pg_catalog.|) (((%%s) OPERATOR(pg_catalog.&) 32767::bigint) OPERATOR(pg_catalog.<<) 5)
			OPERATOR(pg_catalog.|) COALESCE(sid, NULLIF(pg_catalog.current_setting(%%L::text, true), %%L::text)::%%I.ulid_flake_sid_setting::integer)::%%I.ulid_flake_sid::bigint, 1::bigint)',
		schema, ms, x, 'ulid_flake.sid', '', schema, schema);
	EXECUTE format('INSERT INTO %%I.ulid_flake_state AS s ("offset", system_id, database_oid, drawn_at)
		SELECT $1, c.system_identifier, d.oid, pg_catalog.now() FROM pg_catalog.pg_control_system() AS c, pg_catalog.pg_database AS d
		WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
		ON CONFLICT (singleton) DO UPDATE SET "offset" = EXCLUDED."offset", system_id = EXCLUDED.system_id,
			database_oid = EXCLUDED.database_oid, drawn_at = EXCLUDED.drawn_at', schema) USING new_offset;
END$body$, schema, epoch));

	-- ulid_flake_check_node(): draws a new offset, and returns true, when
	-- the state was recorded on another node (or is missing: pg_dump -s).
	EXECUTE pg_catalog.format($f$CREATE OR REPLACE FUNCTION %1$I.ulid_flake_check_node() RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS %2$L$f$, schema, pg_catalog.format($body$
DECLARE
	same boolean;
BEGIN
	EXECUTE format('SELECT s.system_id = c.system_identifier AND s.database_oid = d.oid
		FROM %%I.ulid_flake_state AS s, pg_catalog.pg_control_system() AS c, pg_catalog.pg_database AS d
		WHERE d.datname = pg_catalog.current_database() FOR UPDATE OF s', %1$L) INTO same;
	IF same THEN
		RETURN false;
	END IF;
	EXECUTE format('SELECT %%I.ulid_flake_build($1)', %1$L) USING floor(random() * 1048575)::bigint;
	RETURN true;
END$body$, schema));
	EXECUTE pg_catalog.format('SELECT %1$I.ulid_flake_build(s."offset") FROM %1$I.ulid_flake_state AS s', schema);
END
$install$;

DROP DOMAIN ulid_flake_verified;
DROP TABLE ulid_flake_nodes;
DROP FUNCTION ulid_flake_nodes_arrived();
DROP DOMAIN ulid_flake_arrival;
DROP FUNCTION ulid_flake_arrived(boolean);
DROP FUNCTION ulid_flake_verify(boolean), ulid_flake_node_sync(text, bigint, boolean, uuid, bigint, integer), ulid_flake_out_of_range(timestamp with time zone, bigint),
	ulid_flake_epoch_ms(), ulid_flake_node_sid(), ulid_flake_settings(text);
ALTER TABLE ulid_flake_state DROP COLUMN epoch_ms, DROP COLUMN node_id, DROP COLUMN started_at, DROP COLUMN mesh;
DROP FUNCTION ulid_flake_alone(name);
