-- ulidflake 007: the epoch is fixed at install, so that the generators
-- read no setting per row.
--
-- * ulid_flake_epoch_ms() returns the epoch, in Unix milliseconds. It is an
--   SQL function holding a constant: the planner inlines it, and the
--   generators, ulid_flake_time, ulid_flake_min and ulid_flake_max, which
--   call it, get the epoch as a constant in their plans. It is STABLE, not
--   IMMUTABLE: the planner inlines a STABLE function and records that the
--   plan depends on it, so that a cached plan is made again when
--   ulid_flake_set_epoch replaces it; an IMMUTABLE one is evaluated ahead
--   and leaves no such trace, and a cached plan would keep the old epoch
--   (TestSetEpochReachesCachedPlans). Version 6
--   read the setting ulid_flake.epoch_ms and checked it through a domain on
--   every row, which cost about as much as the rest of ulid_flake().
-- * This file takes the epoch version 6 uses in the session that runs it:
--   the setting ulid_flake.epoch_ms (migrations.Epoch sets it; else
--   ALTER DATABASE ... SET, a connection parameter, SET), checked as
--   version 6 checks it (23514), or else 2024-01-01 (1704067200000). It
--   is read by calling version 6's ulid_flake_time(0), never out of a
--   function's source. It is refused (55000) when the setting is set to
--   another epoch for a role or the database, whose sessions version 6
--   gave that epoch, or when ulid_flake_ext 1.0 (which reads the setting)
--   is installed here. After that the setting is not read:
--   ulid_flake_set_epoch(ms), for the install's owner, changes the epoch.
-- * An epoch is 0 to 244606207777792 Unix ms (1970-01-01 to the last one
--   whose IDs carry times within year 9999), as flake.NewEpoch takes;
--   another is refused with 22023.
-- * ulid_flake_state.epoch_ms records it beside the offset, where the C
--   extension (ulid_flake_ext) reads it. ulid_flake_set_epoch and
--   ulid_flake_build write both in the same transaction.
-- * The generators keep their formula and offset, and their range check of
--   the clock (the domain ulid_flake_timestamp: it is what refuses a
--   wrapped ID, and costs little once the epoch is a constant);
--   ulid_flake_scalable reads ulid_flake.sid only when it is given no SID.
--
-- As in 004, every statement runs with search_path pinned to the install
-- schema, and the bodies are SQL-standard with qualified operators and
-- functions, or PL/pgSQL with search_path = pg_catalog, pg_temp; a text
-- that holds the schema's name is given to format() only as an argument,
-- or put in a body as a quoted literal.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- The install schema is the installer's alone (ulid_flake_alone, version 5).
SELECT ulid_flake_alone(pg_catalog.current_schema());

ALTER TABLE ulid_flake_state ADD COLUMN epoch_ms bigint;

-- ulid_flake_epoch_settings(): the epochs version 6 gives the sessions of
-- this database, from the settings the catalog shows: for a role without
-- a setting of its own, the database's (ALTER DATABASE ... SET), else all
-- roles' (ALTER ROLE ALL SET), else the server's (postgresql.conf, ALTER
-- SYSTEM; a caller who may not read pg_file_settings gets 42501, which
-- names it), else 2024-01-01;
-- each role's own (ALTER ROLE ... [IN DATABASE] SET); and the one the
-- calling session started with (which also holds a value given on the
-- server's command line or in the connection's options). The setting's
-- name matches in any case; its value as version 6 reads it: empty is the
-- default, and NULL stands for a value the domain ulid_flake_epoch_setting
-- refuses (those sessions make no ID). A session's own SET, and other
-- sessions' connection options, leave no trace here.
CREATE FUNCTION ulid_flake_epoch_settings() RETURNS TABLE (who text, epoch_ms bigint)
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
REVOKE EXECUTE ON FUNCTION ulid_flake_epoch_settings() FROM PUBLIC;

DO $install$
DECLARE
	schema text := pg_catalog.current_schema();
	setting text := pg_catalog.current_setting('ulid_flake.epoch_ms'::text, true);
	ms_set bigint;
	clash  text;
	epoch  text := pg_catalog.format('%I.ulid_flake_epoch_ms()', pg_catalog.current_schema());
	tms    text;
	bound  text;
	rebuilt boolean;
BEGIN
	-- The epoch this install keeps: version 6's in this session.
	IF setting IS NOT NULL AND setting OPERATOR(pg_catalog.<>) ''::text THEN
		ms_set := setting::ulid_flake_epoch_setting::bigint;
	ELSE
		ms_set := pg_catalog.floor(EXTRACT(epoch FROM ulid_flake_time(0::bigint)) OPERATOR(pg_catalog.*) 1000::numeric)::bigint;
	END IF;
	IF ms_set OPERATOR(pg_catalog.<) 0::bigint OR ms_set OPERATOR(pg_catalog.>) 244606207777792::bigint THEN
		RAISE EXCEPTION 'ulid_flake: epoch % (ulid_flake.epoch_ms) is not between 0 and 244606207777792 Unix ms (1970-01-01 to 9721-04-06)', ms_set
			USING ERRCODE = '22023';
	END IF;
	-- Version 6 gave sessions the epoch of their settings: once IDs have
	-- been made (the migrations draw two sequence values themselves), one
	-- that gave them another would move their IDs.
	-- A sequence never called, or restarted (NULL), counts as used.
	IF NOT COALESCE(pg_catalog.pg_sequence_last_value(pg_catalog.format('%I.ulid_flake_seq', schema)::regclass) OPERATOR(pg_catalog.<=) 2::bigint, false) THEN
		EXECUTE pg_catalog.format('SELECT pg_catalog.string_agg(e.who, %L) FROM %I.ulid_flake_epoch_settings() AS e
			WHERE e.epoch_ms OPERATOR(pg_catalog.<>) $1', '; ', schema) INTO clash USING ms_set;
	END IF;
	IF clash IS NOT NULL THEN
		RAISE EXCEPTION 'ulid_flake: version 7 would fix the epoch at % Unix ms, but version 6 gave other sessions another (%), and IDs have been made: install with the epoch their IDs have (migrations.Epoch, or the setting in the installing session), make the settings that differ say it (ALTER DATABASE ... SET ulid_flake.epoch_ms) or RESET them, and install from a new connection', ms_set, clash
			USING ERRCODE = '55000';
	END IF;
	-- The extension before 1.1 reads the setting, not the epoch fixed here.
	IF EXISTS (SELECT FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) 'ulid_flake_ext'::name
			AND e.extnamespace OPERATOR(pg_catalog.=) pg_catalog.to_regnamespace(pg_catalog.quote_ident(schema))
			AND e.extversion OPERATOR(pg_catalog.=) '1.0'::text) THEN
		RAISE EXCEPTION 'ulid_flake: ulid_flake_ext 1.0 is installed here, which reads the epoch from the setting, not the one version 7 fixes: install its 1.1 files on the server and run ALTER EXTENSION ulid_flake_ext UPDATE first'
			USING ERRCODE = '55000';
	END IF;
	ALTER DOMAIN ulid_flake_timestamp RENAME CONSTRAINT "ulid_flake: clock outside the epoch range (ulid_flake.epoch_ms)"
		TO "ulid_flake: clock outside the epoch range (ulid_flake_epoch_ms)";
	EXECUTE pg_catalog.format('CREATE FUNCTION %I.ulid_flake_epoch_ms() RETURNS bigint
		LANGUAGE sql STABLE PARALLEL SAFE RETURN %L::bigint', schema, ms_set);

	-- ulid_flake_time, ulid_flake_min and ulid_flake_max, as in 004, with
	-- the epoch from ulid_flake_epoch_ms().
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_time(id bigint) RETURNS timestamp with time zone
		LANGUAGE sql STABLE STRICT PARALLEL SAFE
		RETURN %L::timestamp with time zone OPERATOR(pg_catalog.+)
			((%s OPERATOR(pg_catalog.+) ((id OPERATOR(pg_catalog.>>) 20) OPERATOR(pg_catalog.&) 8796093022207::bigint))::double precision
			OPERATOR(pg_catalog.*) %L::interval)',
		schema, '1970-01-01 00:00:00+00', epoch, '1 millisecond');
	tms := pg_catalog.format('(pg_catalog.floor(EXTRACT(epoch FROM t) OPERATOR(pg_catalog.*) 1000::numeric)::bigint OPERATOR(pg_catalog.-) %s)', epoch);
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

	-- ulid_flake_build(offset), as in 004, with the epoch from
	-- ulid_flake_epoch_ms(), which it also records in the state. The
	-- bodies of it and of ulid_flake_set_epoch hold the install schema as a
	-- quoted literal, put where they say @schema@.
	EXECUTE pg_catalog.format($f$CREATE OR REPLACE FUNCTION %I.ulid_flake_build(new_offset bigint) RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS %L$f$, schema, pg_catalog.replace($body$
DECLARE
	schema text := @schema@;
	x      text;
	ms     text;
BEGIN
	IF new_offset IS NULL OR new_offset < 0 OR new_offset >= 1048575 THEN
		RAISE EXCEPTION 'ulid_flake: offset % not in 0..1048574', new_offset USING ERRCODE = '22003';
	END IF;
	x  := format('((pg_catalog.nextval(%L::regclass) OPERATOR(pg_catalog.%%) 1048575::bigint) OPERATOR(pg_catalog.+) %s::bigint) OPERATOR(pg_catalog.%%) 1048575::bigint',
		format('%I.ulid_flake_seq', schema), new_offset);
	ms := format('((pg_catalog.floor(pg_catalog.date_part(%L::text, pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000::double precision)::bigint OPERATOR(pg_catalog.-) %I.ulid_flake_epoch_ms())::%I.ulid_flake_timestamp::bigint OPERATOR(pg_catalog.<<) 20)',
		'epoch', schema, schema);
	EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake() RETURNS bigint LANGUAGE sql VOLATILE PARALLEL UNSAFE
		RETURN GREATEST(%s OPERATOR(pg_catalog.|) (((%s) OPERATOR(pg_catalog.*) 32::bigint) OPERATOR(pg_catalog.%%) 1048575::bigint), 1::bigint)',
		schema, ms, x);
	EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake_scalable(sid integer DEFAULT NULL) RETURNS bigint LANGUAGE sql VOLATILE PARALLEL UNSAFE
		RETURN GREATEST(%s OPERATOR(pg_catalog.|) (((%s) OPERATOR(pg_catalog.&) 32767::bigint) OPERATOR(pg_catalog.<<) 5)
			OPERATOR(pg_catalog.|) COALESCE(sid, NULLIF(pg_catalog.current_setting(%L::text, true), %L::text)::%I.ulid_flake_sid_setting::integer)::%I.ulid_flake_sid::bigint, 1::bigint)',
		schema, ms, x, 'ulid_flake.sid', '', schema, schema);
	EXECUTE format('INSERT INTO %1$I.ulid_flake_state AS s ("offset", system_id, database_oid, drawn_at, epoch_ms)
		SELECT $1, c.system_identifier, d.oid, pg_catalog.now(), %1$I.ulid_flake_epoch_ms()
		FROM pg_catalog.pg_control_system() AS c, pg_catalog.pg_database AS d
		WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
		ON CONFLICT (singleton) DO UPDATE SET "offset" = EXCLUDED."offset", system_id = EXCLUDED.system_id,
			database_oid = EXCLUDED.database_oid, drawn_at = EXCLUDED.drawn_at, epoch_ms = EXCLUDED.epoch_ms', schema) USING new_offset;
END$body$, '@schema@', pg_catalog.quote_literal(schema)));

	-- ulid_flake_set_epoch(ms): the one way to change the epoch after the
	-- install. Once the sequence has made IDs (beyond the two values the
	-- migrations draw), refused unless force: a later epoch gives new IDs
	-- the timestamps of IDs already made, and a statement that started
	-- before the change keeps the old epoch until it ends, so that even an
	-- earlier one can repeat an ID.
	EXECUTE pg_catalog.format($f$CREATE FUNCTION %I.ulid_flake_set_epoch(epoch_ms bigint, force boolean DEFAULT false) RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS %L$f$, schema, pg_catalog.replace($body$
DECLARE
	schema text := @schema@;
	cur    bigint;
	used   boolean;
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
	EXECUTE format('SELECT %1$I.ulid_flake_epoch_ms(), NOT coalesce(pg_catalog.pg_sequence_last_value(%2$L::regclass) <= 2, false)
		FROM %1$I.ulid_flake_state FOR UPDATE', schema, format('%I.ulid_flake_seq', schema)) INTO cur, used;
	IF epoch_ms <> cur AND used AND NOT coalesce(force, false) THEN
		RAISE EXCEPTION 'ulid_flake_set_epoch: IDs have been made under the epoch in force, %: a new one moves their times, a later one makes new IDs repeat their timestamps, and a statement in flight keeps the old one, so IDs can repeat (force => true only while nothing inserts, and where every ID is to be read under the new epoch)', cur
			USING ERRCODE = '55000';
	END IF;
	EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake_epoch_ms() RETURNS bigint
		LANGUAGE sql STABLE PARALLEL SAFE RETURN %L::bigint', schema, epoch_ms);
	EXECUTE format('UPDATE %I.ulid_flake_state SET epoch_ms = $1', schema) USING epoch_ms;
END$body$, '@schema@', pg_catalog.quote_literal(schema)));
	EXECUTE pg_catalog.format('REVOKE EXECUTE ON FUNCTION %1$I.ulid_flake_build(bigint), %1$I.ulid_flake_set_epoch(bigint, boolean) FROM PUBLIC', schema);

	-- The generators again, with the recorded offset (or a new one, on a
	-- database the state was not recorded on).
	EXECUTE pg_catalog.format('SELECT %I.ulid_flake_check_node()', schema) INTO rebuilt;
	IF NOT rebuilt THEN
		EXECUTE pg_catalog.format('SELECT %1$I.ulid_flake_build(s."offset") FROM %1$I.ulid_flake_state AS s', schema);
	END IF;
END
$install$;
