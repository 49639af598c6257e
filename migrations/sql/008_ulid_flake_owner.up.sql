-- ulidflake 008: what the generators read at run time is the install
-- owner's alone.
--
-- * The install schema must be owned by the role that installs, or by a
--   superuser: a schema's owner may drop any object in it, and could put
--   its own ulid_flake_state (offset, epoch) or functions in their place.
--   Another owner is refused with 42501 (Migrate checks it on every call).
--   A schema owned by pg_database_owner (public, from PostgreSQL 15 on) is
--   the database owner's.
-- * The node's SID is fixed by the install's owner, as the epoch is:
--   ulid_flake_scalable() with no argument reads ulid_flake_node_sid(), an
--   SQL function holding a constant that only ulid_flake_set_sid(sid), for
--   the owner, replaces. The setting ulid_flake.sid is no longer read: any
--   role may SET it, so a role that may not write the key could pick
--   another node's SID. This file takes the SID the installing session
--   has (ALTER DATABASE ... SET ulid_flake.sid, the role's, the
--   connection's), and refuses (55000) when the catalog gives other
--   sessions another.
-- * ulid_flake_set_epoch refuses without force whenever rows may hold IDs:
--   also when there is no state row (a schema-only restore before Migrate),
--   and when a column's default draws from the generators or the sequence,
--   or a column is of the domain ulid_flake_id.
-- * ulid_flake_build writes its bodies with pg_catalog.mod() (the same
--   int8mod as the % operator, so the same IDs), and reaches the schema's
--   name only as a quoted literal.
--
-- As in 004 and 007, every statement runs with search_path pinned to the
-- install schema; bodies are SQL-standard with qualified operators, or
-- PL/pgSQL with search_path = pg_catalog, pg_temp.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

DO $owner$
DECLARE
	owner name;
BEGIN
	SELECT r.rolname INTO owner
	FROM pg_catalog.pg_namespace AS n
	JOIN pg_catalog.pg_database AS d ON d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
	JOIN pg_catalog.pg_roles AS r ON r.oid OPERATOR(pg_catalog.=) CASE
		WHEN n.nspowner OPERATOR(pg_catalog.=) 'pg_database_owner'::pg_catalog.regrole::pg_catalog.oid THEN d.datdba
		ELSE n.nspowner END
	WHERE n.nspname OPERATOR(pg_catalog.=) pg_catalog.current_schema()
		AND NOT r.rolsuper AND r.rolname OPERATOR(pg_catalog.<>) CURRENT_USER;
	IF owner IS NOT NULL THEN
		RAISE EXCEPTION 'ulid_flake: schema % is owned by %, not by %, who installs: % could drop ulid_flake_state or the functions and make its own, with another epoch, offset or SID', pg_catalog.current_schema(), owner, CURRENT_USER, owner
			USING ERRCODE = '42501', HINT = pg_catalog.format('Install as %I (SET ROLE, or migrations.Migrate on its connection), or in a schema that %I owns.', owner, CURRENT_USER);
	END IF;
END
$owner$;

ALTER DOMAIN ulid_flake_sid RENAME CONSTRAINT "no SID: give ulid_flake_scalable(sid) or SET ulid_flake.sid"
	TO "no SID: give ulid_flake_scalable(sid) or ulid_flake_set_sid(n)";

DO $sid$
DECLARE
	schema  text := pg_catalog.current_schema();
	setting text := pg_catalog.current_setting('ulid_flake.sid'::text, true);
	sid     integer;
	clash   text;
BEGIN
	IF setting IS NOT NULL AND setting OPERATOR(pg_catalog.<>) ''::text THEN
		sid := setting::ulid_flake_sid_setting::integer::ulid_flake_sid;
	END IF;
	-- Sessions of other roles, or of the database, that version 7 gave
	-- another SID.
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
	IF clash IS NOT NULL THEN
		RAISE EXCEPTION 'ulid_flake: version 8 fixes the node''s SID at % (this session''s ulid_flake.sid), but the settings give other sessions another (%)', COALESCE(sid::text, 'none'), clash
			USING ERRCODE = '55000', HINT = 'Make the settings agree (ALTER DATABASE ... SET ulid_flake.sid, or RESET the others), then install from a new connection.';
	END IF;
	EXECUTE pg_catalog.format('CREATE FUNCTION %I.ulid_flake_node_sid() RETURNS integer
		LANGUAGE sql STABLE PARALLEL SAFE RETURN %L::integer', schema, sid);
END
$sid$;

-- The functions that name the install schema hold it as a quoted literal:
-- each body below says @schema@ where it goes. ulid_flake_create lives
-- for the length of this file.
CREATE FUNCTION ulid_flake_create(schema text, signature text, body text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.%s LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS %L',
		schema, signature, pg_catalog.replace(body, '@schema@', pg_catalog.quote_literal(schema)));
END
$f$;

-- ulid_flake_set_sid(sid): fixes the SID that ulid_flake_scalable() uses
-- when its call gives none (NULL: none, and such a call is refused, 23514).
-- For the install's owner only.
SELECT ulid_flake_create(pg_catalog.current_schema(), 'ulid_flake_set_sid(sid integer) RETURNS void', $body$
DECLARE
	schema text := @schema@;
BEGIN
	IF sid < 0 OR sid > 31 THEN
		RAISE EXCEPTION 'ulid_flake_set_sid: SID % is not in 0..31', sid USING ERRCODE = '22023';
	END IF;
	EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake_node_sid() RETURNS integer
		LANGUAGE sql STABLE PARALLEL SAFE RETURN %L::integer', schema, sid);
END
$body$);

-- ulid_flake_build(offset), as in 007, with the SID from
-- ulid_flake_node_sid() instead of the setting.
SELECT ulid_flake_create(pg_catalog.current_schema(), 'ulid_flake_build(new_offset bigint) RETURNS void', $body$
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
			OPERATOR(pg_catalog.|) COALESCE(sid, %1$I.ulid_flake_node_sid())::%1$I.ulid_flake_sid::bigint, 1::bigint)',
		schema, ms, x);
	EXECUTE format('INSERT INTO %1$I.ulid_flake_state AS s ("offset", system_id, database_oid, drawn_at, epoch_ms)
		SELECT $1, c.system_identifier, d.oid, pg_catalog.now(), %1$I.ulid_flake_epoch_ms()
		FROM pg_catalog.pg_control_system() AS c, pg_catalog.pg_database AS d
		WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
		ON CONFLICT (singleton) DO UPDATE SET "offset" = EXCLUDED."offset", system_id = EXCLUDED.system_id,
			database_oid = EXCLUDED.database_oid, drawn_at = EXCLUDED.drawn_at, epoch_ms = EXCLUDED.epoch_ms', schema) USING new_offset;
END
$body$);

-- ulid_flake_set_epoch(ms, force), as in 007, and refused without force
-- whenever rows may hold IDs made under the epoch in force: the sequence
-- has made IDs, there is no state row (the data of a dump may be there
-- before Migrate), or a column takes its default from the generators or
-- the sequence, or is of the domain ulid_flake_id.
SELECT ulid_flake_create(pg_catalog.current_schema(), 'ulid_flake_set_epoch(epoch_ms bigint, force boolean DEFAULT false) RETURNS void', $body$
DECLARE
	schema text := @schema@;
	cur    bigint;
	used   text;
BEGIN
	IF epoch_ms IS NULL THEN
		RAISE EXCEPTION 'ulid_flake_set_epoch: the epoch is NULL, want Unix milliseconds' USING ERRCODE = '22004';
	END IF;
	IF epoch_ms < 0 OR epoch_ms > 244606207777792 THEN
		RAISE EXCEPTION 'ulid_flake_set_epoch: epoch % is not between 0 and 244606207777792 Unix ms (1970-01-01 to 9721-04-06)', epoch_ms
			USING ERRCODE = '22023';
	END IF;
	-- The state's row lock orders this with ulid_flake_check_node() and
	-- with a Down of version 7.
	EXECUTE format('SELECT %1$I.ulid_flake_epoch_ms(), CASE WHEN NOT coalesce(pg_catalog.pg_sequence_last_value(%2$L::regclass) <= 2, false)
			THEN %3$L END FROM %1$I.ulid_flake_state FOR UPDATE', schema, format('%I.ulid_flake_seq', schema),
		'the sequence ulid_flake_seq has made IDs') INTO cur, used;
	IF cur IS NULL THEN
		EXECUTE format('SELECT %I.ulid_flake_epoch_ms()', schema) INTO cur;
		used := 'ulid_flake_state has no row (restored from a dump, before Migrate ran?)';
	END IF;
	IF used IS NULL THEN
		SELECT string_agg(DISTINCT format('%s.%I', c.oid::regclass, a.attname), ', ') INTO used
		FROM pg_attribute AS a
		JOIN pg_class AS c ON c.oid = a.attrelid
		LEFT JOIN pg_attrdef AS ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
		WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p')
			AND (a.atttypid = to_regtype(format('%I.ulid_flake_id', schema))
				OR EXISTS (SELECT FROM pg_depend AS d
					WHERE d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
						AND ((d.refclassid = 'pg_proc'::regclass AND d.refobjid IN (
								to_regprocedure(format('%I.ulid_flake()', schema)),
								to_regprocedure(format('%I.ulid_flake_scalable(integer)', schema)),
								to_regprocedure(format('%I.ulid_flake_next(bigint)', schema))))
							OR (d.refclassid = 'pg_class'::regclass AND d.refobjid = to_regclass(format('%I.ulid_flake_seq', schema))))));
		IF used IS NOT NULL THEN
			used := 'columns may hold IDs made under it: ' || used;
		END IF;
	END IF;
	IF epoch_ms <> cur AND used IS NOT NULL AND NOT coalesce(force, false) THEN
		RAISE EXCEPTION 'ulid_flake_set_epoch: %, so IDs may exist under the epoch in force, %: a new one moves their times, a later one makes new IDs repeat their timestamps, and a statement in flight keeps the old one, so IDs can repeat', used, cur
			USING ERRCODE = '55000',
				HINT = 'force => true only while nothing inserts, and where every ID is to be read under the new epoch.';
	END IF;
	EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake_epoch_ms() RETURNS bigint
		LANGUAGE sql STABLE PARALLEL SAFE RETURN %L::bigint', schema, epoch_ms);
	EXECUTE format('UPDATE %I.ulid_flake_state SET epoch_ms = $1', schema) USING epoch_ms;
END
$body$);

-- ulid_flake_epoch_settings(): as 007 makes it now, for installs that ran
-- an earlier 007: the server's configuration file, when the caller may not
-- read it, is refused by name (42501) rather than left out.
CREATE OR REPLACE FUNCTION ulid_flake_epoch_settings() RETURNS TABLE (who text, epoch_ms bigint)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	db   oid := (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database());
	file text;
	own  text;
BEGIN
	-- The value this session started with; SET LOCAL is undone when the
	-- function returns (it has a SET clause).
	SET LOCAL ulid_flake.epoch_ms TO DEFAULT;
	own := coalesce(current_setting('ulid_flake.epoch_ms', true), '');
	BEGIN
		SELECT f.setting INTO file FROM pg_file_settings AS f
			WHERE lower(f.name) = 'ulid_flake.epoch_ms' AND f.applied ORDER BY f.seqno DESC LIMIT 1;
	EXCEPTION WHEN insufficient_privilege THEN
		-- Leaving the file out would take an epoch it may contradict.
		RAISE EXCEPTION 'ulid_flake: role % may not read the server''s configuration files (pg_file_settings), where ulid_flake.epoch_ms may give sessions another epoch', current_user
			USING ERRCODE = '42501',
				HINT = format('Run this as a superuser, or have one run GRANT SELECT ON pg_catalog.pg_file_settings TO %1$I; GRANT EXECUTE ON FUNCTION pg_catalog.pg_show_all_file_settings() TO %1$I; and run it again.', current_user);
	END;
	RETURN QUERY
	WITH s AS (
		SELECT r.setrole, r.setdatabase, substr(c.kv, strpos(c.kv, '=') + 1) AS v
		FROM pg_db_role_setting AS r CROSS JOIN LATERAL unnest(r.setconfig) AS c(kv)
		WHERE r.setdatabase IN (0, db) AND lower(split_part(c.kv, '=', 1)) = 'ulid_flake.epoch_ms'),
	found AS (
		(SELECT x.who, x.v FROM (
			SELECT 'ALTER DATABASE' AS who, s.v, 1 AS rank FROM s WHERE s.setrole = 0 AND s.setdatabase = db
			UNION ALL SELECT 'ALTER ROLE ALL', s.v, 2 FROM s WHERE s.setrole = 0 AND s.setdatabase = 0
			UNION ALL SELECT 'the server''s configuration', file, 3 WHERE file IS NOT NULL
			UNION ALL SELECT 'the default', '1704067200000', 4) AS x
		ORDER BY x.rank LIMIT 1)
		UNION ALL
		SELECT format('ALTER ROLE %I', a.rolname) || CASE WHEN s.setdatabase = 0 THEN '' ELSE ' IN DATABASE' END, s.v
		FROM s JOIN pg_roles AS a ON a.oid = s.setrole
		UNION ALL
		SELECT 'this session''s start (the server''s command line, the connection''s options)', own)
	SELECT found.who || ': ' || found.v,
		CASE WHEN found.v = '' THEN 1704067200000
			WHEN found.v ~ E'^\\s*[+-]?[0-9]{1,18}\\s*$' THEN regexp_replace(found.v, E'\\s', '', 'g')::bigint END
	FROM found;
END
$f$;
REVOKE EXECUTE ON FUNCTION ulid_flake_build(bigint), ulid_flake_set_epoch(bigint, boolean), ulid_flake_set_sid(integer),
	ulid_flake_epoch_settings() FROM PUBLIC;

-- The generators again, with the recorded offset (or a new one, on a
-- database the state was not recorded on).
DO $build$
DECLARE
	rebuilt boolean;
BEGIN
	rebuilt := ulid_flake_check_node();
	IF NOT rebuilt THEN
		PERFORM ulid_flake_build(s."offset") FROM ulid_flake_state AS s;
	END IF;
END
$build$;
DROP FUNCTION ulid_flake_create(text, text, text);
