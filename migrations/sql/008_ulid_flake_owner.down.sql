-- Back to version 7: ulid_flake_scalable() reads its SID from the setting
-- ulid_flake.sid again. Refused (55000) unless the settings give every
-- session the SID that version 8 fixed: ALTER DATABASE ... SET
-- ulid_flake.sid says it, and no role's setting says another. The stricter
-- ulid_flake_set_epoch, and ulid_flake_epoch_settings, stay; the mesh's
-- table ulid_flake_nodes and its functions go.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- The install schema is the installer's alone (ulid_flake_alone, version 5).
SELECT ulid_flake_alone(pg_catalog.current_schema());

DO $check$
DECLARE
	sid   integer := ulid_flake_node_sid();
	clash text;
BEGIN
	SELECT pg_catalog.string_agg(CASE WHEN r.setrole OPERATOR(pg_catalog.=) 0::oid THEN 'ALTER DATABASE/ROLE ALL' ELSE pg_catalog.format('ALTER ROLE %I', a.rolname) END
			OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||) v.v, '; ') INTO clash
	FROM pg_catalog.pg_db_role_setting AS r
	CROSS JOIN LATERAL pg_catalog.unnest(r.setconfig) AS c(kv)
	CROSS JOIN LATERAL (SELECT pg_catalog.substr(c.kv, pg_catalog.strpos(c.kv, '=') OPERATOR(pg_catalog.+) 1) AS v) AS v
	LEFT JOIN pg_catalog.pg_roles AS a ON a.oid OPERATOR(pg_catalog.=) r.setrole
	WHERE r.setdatabase OPERATOR(pg_catalog.=) ANY (ARRAY[0::oid, (SELECT d.oid FROM pg_catalog.pg_database AS d WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())])
		AND pg_catalog.lower(pg_catalog.split_part(c.kv, '=', 1)) OPERATOR(pg_catalog.=) 'ulid_flake.sid'
		AND (CASE WHEN v.v OPERATOR(pg_catalog.~) E'^\\s*[+]?[0-9]{1,9}\\s*$' THEN pg_catalog.regexp_replace(v.v, E'[\\s+]', '', 'g')::integer END)
			IS DISTINCT FROM sid;
	IF clash IS NOT NULL OR (sid IS NOT NULL AND NOT EXISTS (
			SELECT FROM pg_catalog.pg_db_role_setting AS r, pg_catalog.pg_database AS d
			WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database() AND r.setdatabase OPERATOR(pg_catalog.=) d.oid
				AND r.setrole OPERATOR(pg_catalog.=) 0::oid
				AND pg_catalog.format('ulid_flake.sid=%s', sid) OPERATOR(pg_catalog.=) ANY (r.setconfig))) THEN
		RAISE EXCEPTION 'ulid_flake: the node''s SID is %, and version 7 reads the SID from the setting ulid_flake.sid, which would give sessions another (%)', COALESCE(sid::text, 'none'), COALESCE(clash, 'no ALTER DATABASE setting')
			USING ERRCODE = '55000',
				HINT = CASE WHEN sid IS NULL THEN 'RESET the settings of ulid_flake.sid, then migrate down.'
					ELSE pg_catalog.format('ALTER DATABASE %I SET ulid_flake.sid = %s (and RESET the others), then migrate down.', pg_catalog.current_database(), sid) END;
	END IF;
END
$check$;

ALTER DOMAIN ulid_flake_sid RENAME CONSTRAINT "no SID: give ulid_flake_scalable(sid) or ulid_flake_set_sid(n)"
	TO "no SID: give ulid_flake_scalable(sid) or SET ulid_flake.sid";

CREATE FUNCTION ulid_flake_create(schema text, signature text, body text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.%s LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS %L',
		schema, signature, pg_catalog.replace(body, '@schema@', pg_catalog.quote_literal(schema)));
END
$f$;

-- ulid_flake_build(offset) as 007 made it: the SID from the setting.
SELECT ulid_flake_create(pg_catalog.current_schema()::pg_catalog.text, 'ulid_flake_build(new_offset bigint) RETURNS void'::pg_catalog.text, $body$
DECLARE
	schema text := @schema@;
	x      text;
	ms     text;
BEGIN
	IF new_offset IS NULL OR new_offset < 0 OR new_offset >= 1048575 THEN
		RAISE EXCEPTION 'ulid_flake: offset % not in 0..1048574', new_offset USING ERRCODE = '22003';
	END IF;
	x  := format('pg_catalog.mod(pg_catalog.mod(pg_catalog.nextval(%L::regclass), 1048575::bigint) OPERATOR(pg_catalog.+) %s::bigint, 1048575::bigint)',
		format('%I.ulid_flake_seq', schema), new_offset);
	ms := format('((pg_catalog.floor(pg_catalog.date_part(%L::text, pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000::double precision)::bigint OPERATOR(pg_catalog.-) %I.ulid_flake_epoch_ms())::%I.ulid_flake_timestamp::bigint OPERATOR(pg_catalog.<<) 20)',
		'epoch', schema, schema);
	EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake() RETURNS bigint LANGUAGE sql VOLATILE PARALLEL UNSAFE
		RETURN GREATEST(%s OPERATOR(pg_catalog.|) pg_catalog.mod((%s) OPERATOR(pg_catalog.*) 32::bigint, 1048575::bigint), 1::bigint)',
		schema, ms, x);
	EXECUTE format('CREATE OR REPLACE FUNCTION %1$I.ulid_flake_scalable(sid integer DEFAULT NULL) RETURNS bigint LANGUAGE sql VOLATILE PARALLEL UNSAFE
		RETURN GREATEST(%2$s OPERATOR(pg_catalog.|) (((%3$s) OPERATOR(pg_catalog.&) 32767::bigint) OPERATOR(pg_catalog.<<) 5)
			OPERATOR(pg_catalog.|) COALESCE(sid, NULLIF(pg_catalog.current_setting(%4$L::text, true), %5$L::text)::%1$I.ulid_flake_sid_setting::integer)::%1$I.ulid_flake_sid::bigint, 1::bigint)',
		schema, ms, x, 'ulid_flake.sid', '');
	EXECUTE format('INSERT INTO %1$I.ulid_flake_state AS s ("offset", system_id, database_oid, drawn_at, epoch_ms)
		SELECT $1, c.system_identifier, d.oid, pg_catalog.now(), %1$I.ulid_flake_epoch_ms()
		FROM pg_catalog.pg_control_system() AS c, pg_catalog.pg_database AS d
		WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
		ON CONFLICT (singleton) DO UPDATE SET "offset" = EXCLUDED."offset", system_id = EXCLUDED.system_id,
			database_oid = EXCLUDED.database_oid, drawn_at = EXCLUDED.drawn_at, epoch_ms = EXCLUDED.epoch_ms', schema) USING new_offset;
END
$body$::pg_catalog.text);
REVOKE EXECUTE ON FUNCTION ulid_flake_build(bigint) FROM PUBLIC;

DO $build$
BEGIN
	PERFORM ulid_flake_build(s."offset") FROM ulid_flake_state AS s;
END
$build$;

-- ulid_flake_check_node() as version 4 made it, and no mesh: the nodes'
-- table (and its place in any publication), the node identity and the
-- functions that write them go.
SELECT ulid_flake_create(pg_catalog.current_schema()::pg_catalog.text, 'ulid_flake_check_node() RETURNS boolean'::pg_catalog.text, $body$
DECLARE
	same boolean;
BEGIN
	EXECUTE format('SELECT s.system_id = c.system_identifier AND s.database_oid = d.oid
		FROM %I.ulid_flake_state AS s, pg_catalog.pg_control_system() AS c, pg_catalog.pg_database AS d
		WHERE d.datname = pg_catalog.current_database() FOR UPDATE OF s', @schema@) INTO same;
	IF same THEN
		RETURN false;
	END IF;
	EXECUTE format('SELECT %I.ulid_flake_build($1)', @schema@) USING floor(random() * 1048575)::bigint;
	RETURN true;
END
$body$::pg_catalog.text);
DROP FUNCTION ulid_flake_new_node(integer), ulid_flake_adopt_node(), ulid_flake_retire_node(uuid), ulid_flake_node_sync(text, integer);
DROP TABLE ulid_flake_nodes;
ALTER TABLE ulid_flake_state DROP COLUMN node_id;

DROP FUNCTION ulid_flake_set_sid(integer);
DROP FUNCTION ulid_flake_node_sid();
DROP FUNCTION ulid_flake_create(text, text, text);
