-- ulidflake 005: from 0.1.0's version 4, what the ID functions read is the
-- install owner's alone.
--
-- * The install schema is the installer's alone: ulid_flake_alone(schema)
--   refuses (55U05) a schema another role owns, may create in, or holds
--   objects of the install's names in. This file, its down, Migrate before
--   every step and the owner's functions call it first, so no function of
--   another role's is adopted or called and no owner is checked one by one.
-- * A body that calls another function of the install is SQL-standard
--   (RETURN, BEGIN ATOMIC), bound by object id when it is created: no
--   search_path and no overload made later (a defaulted argument) changes
--   or stops it. The owner's functions hand what they read to
--   ulid_flake_node_sync, PL/pgSQL that calls no function of the install.
-- * The epoch, the SID and the offset are fixed by the owner: constants in
--   the ID functions' bodies (version 4's formula; mod is its %), written
--   again at each change, and in ulid_flake_epoch_ms() and
--   ulid_flake_node_sid(), which the planner inlines (STABLE: a cached
--   plan is made again when they are replaced in place); ulid_flake_state
--   records them for the C extension. The settings are read once, here
--   (refused when other sessions had another: 55000 epoch, 55U06 SID).
-- * A mesh knows its writers (ulid_flake_nodes, 55U01 to 55U04); and
--   ulid_flake_at, prefixed text forms, ulid_flake_block, and a time out
--   of the epoch's range that names the fix.
--
-- search_path is pinned to the install schema (pg_catalog first);
-- operators are qualified; PL/pgSQL has search_path = pg_catalog, pg_temp.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- ulid_flake_alone(schema): refuses (55U05) an install schema that is not the
-- installing role's alone.
CREATE FUNCTION ulid_flake_alone(schema name) RETURNS void LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $alone$
DECLARE
-- The body of ulid_flake_alone() (version 5) and of the DO block Migrate
-- runs before every step: the install schema is the installer's alone.
-- Refused (55U05) when a role other than the installing one owns it (a
-- schema owned by pg_database_owner is the database owner's), when
-- another role may create in it, or when another role owns an object of
-- the install's names (ulid_flake...) or an operator there, or a
-- trigger is on one of its tables: such a role could put its own
-- functions or state where the install and its callers find them, or run
-- its code when the install writes. Superusers, who may do all of this anyway, and the roles
-- that have the installing role's rights (members that inherit them) act
-- as the installer. It
-- follows the declaration of schema (name), the install schema; it pins
-- search_path itself and puts it back, for the DO block (the function
-- has SET search_path = pg_catalog, pg_temp too).
	path    pg_catalog.text := pg_catalog.current_setting('search_path');
	nsp     pg_catalog.oid;
	owner   pg_catalog.text;
	creates pg_catalog.text;
	objects pg_catalog.text;
	writers pg_catalog.text;
BEGIN
	PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
	SELECT n.oid INTO nsp FROM pg_namespace AS n WHERE n.nspname = schema;
	SELECT format('it is owned by %I', r.rolname) INTO owner
	FROM pg_namespace AS n, pg_database AS d, pg_roles AS r
	WHERE n.oid = nsp AND d.datname = current_database()
		AND r.oid = CASE WHEN n.nspowner = 'pg_database_owner'::regrole THEN d.datdba ELSE n.nspowner END
		AND NOT r.rolsuper AND r.rolname <> current_user;
	IF EXISTS (SELECT FROM pg_namespace AS n, aclexplode(n.nspacl) AS a
			WHERE n.oid = nsp AND a.grantee = 0 AND a.privilege_type = 'CREATE') THEN
		creates := 'PUBLIC may create in it';
	ELSE
		SELECT string_agg(quote_ident(r.rolname), ', ' ORDER BY r.rolname) || ' may create in it' INTO creates
		FROM pg_namespace AS n JOIN pg_roles AS r ON r.oid <> n.nspowner
		WHERE n.oid = nsp AND NOT r.rolsuper AND r.rolname <> current_user
			AND NOT pg_has_role(r.oid, current_user, 'USAGE') AND has_schema_privilege(r.oid, nsp, 'CREATE');
	END IF;
	SELECT string_agg(format('%s is owned by %I', o.what, r.rolname), ', ' ORDER BY o.what) INTO objects
	FROM (SELECT format('function %s', p.oid::regprocedure) AS what, p.proowner AS owner
			FROM pg_proc AS p WHERE p.pronamespace = nsp AND starts_with(p.proname::text, 'ulid_flake')
		UNION ALL SELECT format('relation %s', c.oid::regclass), c.relowner
			FROM pg_class AS c WHERE c.relnamespace = nsp AND starts_with(c.relname::text, 'ulid_flake')
		UNION ALL SELECT format('type %s', t.oid::regtype), t.typowner
			FROM pg_type AS t WHERE t.typnamespace = nsp AND starts_with(t.typname::text, 'ulid_flake')
		UNION ALL SELECT format('operator %s', o.oid::regoperator), o.oprowner
			FROM pg_operator AS o WHERE o.oprnamespace = nsp) AS o
	JOIN pg_roles AS r ON r.oid = o.owner
	WHERE NOT r.rolsuper AND r.rolname <> current_user;
	-- A trigger on its tables runs its code when the install writes
	-- them, as the installer (a role granted TRIGGER, as ALTER DEFAULT
	-- PRIVILEGES ... GRANT ALL gives, can add one): none is allowed. The
	-- install writes its state from the first statement after this.
	SELECT string_agg(format('trigger %I on %s', tg.tgname, c.oid::regclass), ', ' ORDER BY c.relname, tg.tgname) INTO writers
	FROM pg_trigger AS tg JOIN pg_class AS c ON c.oid = tg.tgrelid
	WHERE c.relnamespace = nsp AND starts_with(c.relname::text, 'ulid_flake') AND NOT tg.tgisinternal
		-- The install's own (version 5): its function is the install's.
		AND tg.tgfoid NOT IN (SELECT p.oid FROM pg_proc AS p WHERE p.pronamespace = nsp AND p.proname = 'ulid_flake_nodes_arrived' AND p.pronargs = 0);
	IF concat(owner, creates, objects, writers) <> '' THEN
		RAISE EXCEPTION 'ulid_flake: schema % is not the installing role''s (%) alone: %', quote_ident(schema), quote_ident(current_user),
				concat_ws('; ', owner, creates, objects, writers)
			USING ERRCODE = '55U05',
				HINT = format('Make %I the installer''s alone: REVOKE CREATE ON SCHEMA %I FROM the roles named, give it to %I (ALTER SCHEMA ... OWNER TO), drop what other roles made there and the triggers named, and REVOKE TRIGGER on its tables from other roles. Or install in a schema of its own that no other role may create in: CREATE SCHEMA ulid_flake (as %I), then migrations.WithSchema("ulid_flake"), or search_path = ulid_flake for the files.', schema, schema, current_user, current_user);
	END IF;
	PERFORM pg_catalog.set_config('search_path', path, true);
END
$alone$;
REVOKE EXECUTE ON FUNCTION ulid_flake_alone(name) FROM PUBLIC;
SELECT ulid_flake_alone(pg_catalog.current_schema());

-- ulid_flake_settings(guc): where the setting guc is set for this
-- database's sessions (pg_db_role_setting, the server's files, this
-- session's start without its own SET), ranked as sessions read them: 0
-- per role (per_role), 1 the database, 2 all roles, 3 the files, 4 the
-- default (empty, as version 4 reads an empty value). A file
-- the caller may not read is a row with no value. For this file and its
-- down.
CREATE FUNCTION ulid_flake_settings(guc text) RETURNS TABLE (who text, per_role boolean, rank integer, value text)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	db     oid := (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database());
	file   text;
	unread boolean := false;
	own    text;
BEGIN
	-- SET LOCAL is undone when the function returns (it has a SET clause).
	EXECUTE format('SET LOCAL %I TO DEFAULT', guc);
	own := coalesce(current_setting(guc, true), '');
	BEGIN
		SELECT f.setting INTO file FROM pg_file_settings AS f
			WHERE lower(f.name) = guc AND f.applied ORDER BY f.seqno DESC LIMIT 1;
	EXCEPTION WHEN insufficient_privilege THEN
		unread := true;
	END;
	RETURN QUERY
	SELECT CASE WHEN r.setrole <> 0 THEN format('ALTER ROLE %I', a.rolname) || CASE WHEN r.setdatabase = 0 THEN '' ELSE ' IN DATABASE' END
			WHEN r.setdatabase = 0 THEN 'ALTER ROLE ALL' ELSE 'ALTER DATABASE' END,
		r.setrole <> 0, CASE WHEN r.setrole <> 0 THEN 0 WHEN r.setdatabase = 0 THEN 2 ELSE 1 END, substr(c.kv, strpos(c.kv, '=') + 1)
	FROM pg_db_role_setting AS r CROSS JOIN LATERAL unnest(r.setconfig) AS c(kv)
	LEFT JOIN pg_roles AS a ON a.oid = r.setrole
	WHERE r.setdatabase IN (0, db) AND lower(split_part(c.kv, '=', 1)) = guc
	UNION ALL SELECT 'the server''s configuration files', false, 3, file WHERE file IS NOT NULL
	UNION ALL SELECT format('the server''s configuration files, which role %I may not read (pg_file_settings)', current_user), false, 3, NULL WHERE unread
	UNION ALL SELECT 'this session''s start (the server''s command line, the connection''s options)', true, 0, own
	UNION ALL SELECT 'the default', false, 4, '';
END
$f$;
REVOKE EXECUTE ON FUNCTION ulid_flake_settings(text) FROM PUBLIC;

-- The epoch: version 4's in this session (the setting, else 2024-01-01),
-- checked as version 4 checks it (23514). Once the sequence has made IDs
-- (beyond the two values the migrations draw; NULL: restarted), refused
-- when version 4 gave other sessions another epoch, or when
-- ulid_flake_ext 1.0, which reads the setting, is installed here.
ALTER TABLE ulid_flake_state ADD COLUMN epoch_ms bigint, ADD COLUMN node_id uuid, ADD COLUMN started_at timestamp with time zone, ADD COLUMN mesh boolean;
DO $epoch$
DECLARE
	setting text := pg_catalog.current_setting('ulid_flake.epoch_ms'::text, true);
	ms      bigint := 1704067200000;
	clash   text;
BEGIN
	IF setting OPERATOR(pg_catalog.<>) ''::text THEN
		ms := setting::ulid_flake_epoch_setting::bigint;
	END IF;
	IF ms OPERATOR(pg_catalog.<) 0::bigint OR ms OPERATOR(pg_catalog.>) 244606207777792::bigint THEN
		RAISE EXCEPTION 'ulid_flake: epoch % (ulid_flake.epoch_ms) is not between 0 and 244606207777792 Unix ms (1970-01-01 to 9721-04-06)', ms
			USING ERRCODE = '22023';
	END IF;
	IF NOT COALESCE(pg_catalog.pg_sequence_last_value('ulid_flake_seq'::regclass) OPERATOR(pg_catalog.<=) 2::bigint, false) THEN
		IF EXISTS (SELECT FROM ulid_flake_settings('ulid_flake.epoch_ms') AS s WHERE s.value IS NULL) THEN
			RAISE EXCEPTION 'ulid_flake: role % may not read the server''s configuration files (pg_file_settings), where ulid_flake.epoch_ms may give sessions another epoch', CURRENT_USER
				USING ERRCODE = '42501',
					HINT = pg_catalog.format('Run this as a superuser, or have one run GRANT SELECT ON pg_catalog.pg_file_settings TO %1$I; GRANT EXECUTE ON FUNCTION pg_catalog.pg_show_all_file_settings() TO %1$I; and run it again.', CURRENT_USER);
		END IF;
		SELECT pg_catalog.string_agg(s.who OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||) COALESCE(NULLIF(s.value, ''), '1704067200000'), '; ') INTO clash
		FROM (SELECT x.* FROM ulid_flake_settings('ulid_flake.epoch_ms') AS x WHERE x.per_role
			UNION ALL (SELECT x.* FROM ulid_flake_settings('ulid_flake.epoch_ms') AS x WHERE NOT x.per_role ORDER BY x.rank LIMIT 1)) AS s
		WHERE (CASE WHEN s.value OPERATOR(pg_catalog.=) '' THEN 1704067200000
			WHEN s.value OPERATOR(pg_catalog.~) E'^\\s*[+-]?[0-9]{1,18}\\s*$' THEN pg_catalog.regexp_replace(s.value, E'\\s', '', 'g')::bigint END) IS DISTINCT FROM ms;
	END IF;
	IF clash IS NOT NULL THEN
		RAISE EXCEPTION 'ulid_flake: version 5 would fix the epoch at % Unix ms, but version 4 gave other sessions another (%), and IDs have been made: install with the epoch their IDs have (migrations.Epoch, or the setting in the installing session), make the settings that differ say it (ALTER DATABASE ... SET ulid_flake.epoch_ms) or RESET them, and install from a new connection', ms, clash
			USING ERRCODE = '55000';
	END IF;
	IF EXISTS (SELECT FROM pg_catalog.pg_extension AS e WHERE e.extname OPERATOR(pg_catalog.=) 'ulid_flake_ext'::name
			AND e.extnamespace OPERATOR(pg_catalog.=) pg_catalog.to_regnamespace(pg_catalog.quote_ident(pg_catalog.current_schema())) AND e.extversion OPERATOR(pg_catalog.=) '1.0'::text) THEN
		RAISE EXCEPTION 'ulid_flake: ulid_flake_ext 1.0 is installed here, which reads the epoch from the setting, not the one version 5 fixes: install its 1.1 files on the server and run ALTER EXTENSION ulid_flake_ext UPDATE first'
			USING ERRCODE = '55000';
	END IF;
	EXECUTE pg_catalog.format('CREATE FUNCTION ulid_flake_epoch_ms() RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE RETURN %L::bigint', ms);
	UPDATE ulid_flake_state SET epoch_ms = ms;
END
$epoch$;

-- The SID: the one version 4 gave the database's sessions (the database's
-- setting, else all roles', else the server's files', else none). Refused
-- (55U06) when a role's own setting, or this session's start, says another.
DO $sid$
DECLARE
	chosen text;
	clash  text;
	unread text;
	sid    integer;
BEGIN
	WITH s AS (
		SELECT x.*, CASE WHEN x.value OPERATOR(pg_catalog.=) '' THEN NULL
			WHEN x.value OPERATOR(pg_catalog.~) E'^\\s*[+]?[0-9]{1,9}\\s*$' THEN pg_catalog.regexp_replace(x.value, E'[\\s+]', '', 'g')::integer
			ELSE -1 END AS n
		FROM ulid_flake_settings('ulid_flake.sid') AS x),
	pick AS (SELECT s.value, s.n FROM s WHERE NOT s.per_role AND s.value IS NOT NULL ORDER BY s.rank LIMIT 1)
	SELECT (SELECT pick.value FROM pick),
		(SELECT pg_catalog.string_agg(s.who OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||) s.value, '; ') FROM s
			WHERE s.per_role AND s.n IS DISTINCT FROM (SELECT pick.n FROM pick)),
		(SELECT s.who FROM s WHERE s.value IS NULL)
	INTO chosen, clash, unread;
	IF chosen OPERATOR(pg_catalog.<>) '' THEN
		sid := chosen::ulid_flake_sid_setting::integer::ulid_flake_sid;
	END IF;
	IF clash IS NOT NULL THEN
		RAISE EXCEPTION 'ulid_flake: version 5 fixes the node''s SID at % (the database''s setting, else all roles'', else the server''s files), but other sessions had another (%)%',
				COALESCE(sid::text, 'none'), clash, COALESCE('; ' OPERATOR(pg_catalog.||) unread, '')
			USING ERRCODE = '55U06',
				HINT = 'Make the settings agree (ALTER DATABASE ... SET ulid_flake.sid, and RESET the others), or have a superuser run it, then install from a new connection.';
	END IF;
	EXECUTE pg_catalog.format('CREATE FUNCTION ulid_flake_node_sid() RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE RETURN %L::integer', sid);
END
$sid$;
ALTER DOMAIN ulid_flake_timestamp RENAME CONSTRAINT "ulid_flake: clock outside the epoch range (ulid_flake.epoch_ms)"
	TO "ulid_flake: clock outside the epoch range (ulid_flake_epoch_ms)";
ALTER DOMAIN ulid_flake_sid RENAME CONSTRAINT "no SID: give ulid_flake_scalable(sid) or SET ulid_flake.sid"
	TO "no SID: give ulid_flake_scalable(sid) or ulid_flake_set_sid(n)";

-- ulid_flake_out_of_range(t, epoch_ms): raises 22003 for a time t outside
-- the range of the epoch epoch_ms (Unix ms), with Go's message and a HINT
-- naming the fix. VOLATILE: the planner never runs it ahead of time.
CREATE FUNCTION ulid_flake_out_of_range(t timestamp with time zone, epoch_ms bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	layout constant text := 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';
	utc    constant interval := '00:00:00';
	epoch  timestamp without time zone;
	last   timestamp without time zone;
	after  boolean;
BEGIN
	IF NOT isfinite(t) THEN
		RAISE EXCEPTION 'ulid_flake: time out of range: % is not a finite time', t USING ERRCODE = '22003';
	END IF;
	epoch := '1970-01-01 00:00:00'::timestamp without time zone + epoch_ms::double precision * '1 millisecond'::interval;
	last := epoch + 8796093022207::double precision * '1 millisecond'::interval;
	after := floor(EXTRACT(epoch FROM t) * 1000::numeric)::bigint >= epoch_ms;
	RAISE EXCEPTION USING ERRCODE = '22003',
		MESSAGE = format('ulid_flake: time out of range: %s is %s', to_char(timezone(utc, t), layout), CASE WHEN after
			THEN format('after %s, the last millisecond IDs hold under the epoch %s', to_char(last, layout), to_char(epoch, layout))
			ELSE format('before the epoch, %s', to_char(epoch, layout)) END),
		HINT = format('For such times choose %s epoch for every generator of these IDs before the first is made: '
			'ulid_flake_set_epoch(ms) here (refused once IDs exist, unless forced), migrations.WithEpoch at install, '
			'and WithEpoch in Go; see docs/sql.md, "The epoch".', CASE WHEN after THEN 'a later' ELSE 'an earlier' END);
END
$$;

-- ulid_flake_time, _min and _max with the epoch from ulid_flake_epoch_ms();
-- t's millisecond from the epoch is computed exactly (numeric).
CREATE OR REPLACE FUNCTION ulid_flake_time(id bigint) RETURNS timestamp with time zone LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN '1970-01-01 00:00:00+00'::timestamp with time zone OPERATOR(pg_catalog.+)
	((ulid_flake_epoch_ms() OPERATOR(pg_catalog.+) ((id OPERATOR(pg_catalog.>>) 20) OPERATOR(pg_catalog.&) 8796093022207::bigint))::double precision
	OPERATOR(pg_catalog.*) '1 millisecond'::interval);
CREATE OR REPLACE FUNCTION ulid_flake_min(t timestamp with time zone) RETURNS bigint LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN CASE WHEN NOT pg_catalog.isfinite(t) OR (pg_catalog.floor(EXTRACT(epoch FROM t) OPERATOR(pg_catalog.*) 1000::numeric)::bigint OPERATOR(pg_catalog.-) ulid_flake_epoch_ms()) OPERATOR(pg_catalog.<) 0::bigint
		OR (pg_catalog.floor(EXTRACT(epoch FROM t) OPERATOR(pg_catalog.*) 1000::numeric)::bigint OPERATOR(pg_catalog.-) ulid_flake_epoch_ms()) OPERATOR(pg_catalog.>) 8796093022207::bigint
	THEN ulid_flake_out_of_range(t, ulid_flake_epoch_ms())
	ELSE ((pg_catalog.floor(EXTRACT(epoch FROM t) OPERATOR(pg_catalog.*) 1000::numeric)::bigint OPERATOR(pg_catalog.-) ulid_flake_epoch_ms()) OPERATOR(pg_catalog.<<) 20) OPERATOR(pg_catalog.|) 0::bigint END;
CREATE OR REPLACE FUNCTION ulid_flake_max(t timestamp with time zone) RETURNS bigint LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN CASE WHEN NOT pg_catalog.isfinite(t) OR (pg_catalog.floor(EXTRACT(epoch FROM t) OPERATOR(pg_catalog.*) 1000::numeric)::bigint OPERATOR(pg_catalog.-) ulid_flake_epoch_ms()) OPERATOR(pg_catalog.<) 0::bigint
		OR (pg_catalog.floor(EXTRACT(epoch FROM t) OPERATOR(pg_catalog.*) 1000::numeric)::bigint OPERATOR(pg_catalog.-) ulid_flake_epoch_ms()) OPERATOR(pg_catalog.>) 8796093022207::bigint
	THEN ulid_flake_out_of_range(t, ulid_flake_epoch_ms())
	ELSE ((pg_catalog.floor(EXTRACT(epoch FROM t) OPERATOR(pg_catalog.*) 1000::numeric)::bigint OPERATOR(pg_catalog.-) ulid_flake_epoch_ms()) OPERATOR(pg_catalog.<<) 20) OPERATOR(pg_catalog.|) 1048575::bigint END;

-- ulid_flake_at(t): the ID ulid_flake() would make if the clock read t, for
-- backfills: t's millisecond (ulid_flake_min(t), with its range check)
-- above the low 20 bits of one ulid_flake() call, from the shared
-- sequence (docs/backfill.md). STRICT: a NULL time gives NULL.
CREATE FUNCTION ulid_flake_at(t timestamp with time zone) RETURNS bigint LANGUAGE sql VOLATILE STRICT PARALLEL UNSAFE
RETURN GREATEST(ulid_flake_min(t) OPERATOR(pg_catalog.|) (ulid_flake() OPERATOR(pg_catalog.&) 1048575::bigint), 1::bigint);

-- The text forms of prefixed IDs (flake.Prefixed in Go): prefix, '_' and
-- the 13 characters; the prefix is never stored. A prefix that is not 1 to
-- 63 lower-case ASCII letters, digits and underscores, starting with a
-- letter and not ending with an underscore, is refused (22023); a text
-- without the prefix, 22P02, as Go's ParsePrefixed. STRICT.
CREATE FUNCTION ulid_flake_encode(id bigint, prefix text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN NOT (COALESCE(prefix OPERATOR(pg_catalog.~) '^[a-z]([a-z0-9_]*[a-z0-9])?$'::text, false)
		AND pg_catalog.octet_length(prefix) OPERATOR(pg_catalog.<=) 63)
	THEN ulid_flake_raise('22023'::text, pg_catalog.format('ulid_flake: wrong prefix: %s is not 1 to 63 lower-case ASCII letters, digits and underscores, starting with a letter and not ending with an underscore'::text,
		pg_catalog.to_json(prefix)), NULL::text)
	ELSE prefix OPERATOR(pg_catalog.||) '_'::text OPERATOR(pg_catalog.||) ulid_flake_encode(id) END;
-- The prefix found in s (what precedes its last underscore) names what was
-- sent in the error.
CREATE FUNCTION ulid_flake_decode(s text, prefix text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN NOT (COALESCE(prefix OPERATOR(pg_catalog.~) '^[a-z]([a-z0-9_]*[a-z0-9])?$'::text, false)
		AND pg_catalog.octet_length(prefix) OPERATOR(pg_catalog.<=) 63)
	THEN ulid_flake_raise('22023'::text, pg_catalog.format('ulid_flake: wrong prefix: %s is not 1 to 63 lower-case ASCII letters, digits and underscores, starting with a letter and not ending with an underscore'::text,
		pg_catalog.to_json(prefix)), NULL::bigint)
	WHEN pg_catalog.starts_with(s, prefix OPERATOR(pg_catalog.||) '_'::text)
		AND pg_catalog.strpos(pg_catalog.substr(s, pg_catalog.length(prefix) OPERATOR(pg_catalog.+) 2), '_'::text) OPERATOR(pg_catalog.=) 0
		THEN ulid_flake_decode(pg_catalog.substr(s, pg_catalog.length(prefix) OPERATOR(pg_catalog.+) 2))
	WHEN pg_catalog.strpos(pg_catalog.reverse(s), '_'::text) OPERATOR(pg_catalog.>) 0
		AND pg_catalog.strpos(pg_catalog.reverse(s), '_'::text) OPERATOR(pg_catalog.<) pg_catalog.length(s)
		THEN ulid_flake_raise('22P02'::text, pg_catalog.format('ulid_flake: wrong prefix: %s has the prefix %s, want %s'::text, pg_catalog.to_json(s),
			pg_catalog.to_json(pg_catalog.left(s, pg_catalog.length(s) OPERATOR(pg_catalog.-) pg_catalog.strpos(pg_catalog.reverse(s), '_'::text))),
			pg_catalog.to_json(prefix)), NULL::bigint)
	ELSE ulid_flake_raise('22P02'::text, pg_catalog.format('ulid_flake: wrong prefix: %s has no prefix, want %s followed by 13 characters'::text,
		pg_catalog.to_json(s), pg_catalog.to_json(prefix OPERATOR(pg_catalog.||) '_'::text)), NULL::bigint) END;

-- ulid_flake_block(n): n new IDs (1 to 65536, else 22023), ascending, made
-- by the generator DEFAULT uses on this node: ulid_flake() with no SID,
-- ulid_flake_scalable() with the node's. For package blocks; any role
-- may call it, as it may call ulid_flake().
CREATE FUNCTION ulid_flake_block(n integer) RETURNS bigint[] LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN CASE WHEN n IS NULL OR n OPERATOR(pg_catalog.<) 1 OR n OPERATOR(pg_catalog.>) 65536
		THEN ulid_flake_raise('22023'::text, pg_catalog.format('ulid_flake_block: a block of %s IDs: want 1 to 65536',
			COALESCE(n::text, 'NULL'::text)), NULL::bigint[])
	ELSE (SELECT pg_catalog.array_agg(g.id ORDER BY g.id)
		FROM (SELECT CASE WHEN ulid_flake_node_sid() IS NULL THEN ulid_flake() ELSE ulid_flake_scalable(ulid_flake_node_sid()) END AS id
			FROM pg_catalog.generate_series(1, n) AS i) AS g) END;
GRANT EXECUTE ON FUNCTION ulid_flake_block(integer) TO PUBLIC;

-- A mesh knows its writers. Every node of a multi-writer mesh (logical
-- replication both ways) keeps one row in ulid_flake_nodes: its node
-- identity (drawn at random, kept in ulid_flake_state, which is never
-- published), its SID, its system identifier, database OID and timeline
-- (a promotion starts a new one), and the logical replication slots its
-- peers read from on it (a copy of its data directory has none of them).
-- The mesh publishes the table
-- with the application's, so every node reads every node's row. A node
-- writes only its own, as DELETE then INSERT of its key, which no peer's
-- subscription stops on. Nothing runs per insert.
CREATE TABLE ulid_flake_nodes (
	node_id      uuid PRIMARY KEY,
	sid          integer CHECK (sid OPERATOR(pg_catalog.>=) 0 AND sid OPERATOR(pg_catalog.<=) 31),
	system_id    bigint NOT NULL,
	database_oid oid NOT NULL,
	timeline     integer NOT NULL,
	written_at   timestamp with time zone NOT NULL,
	slots        text[] NOT NULL DEFAULT '{}'
);

-- What the ID functions read is written by the install's owner alone: grants
-- made by ALTER DEFAULT PRIVILEGES or GRANT ... ON ALL TABLES IN SCHEMA are
-- taken back (the sequence keeps the USAGE that 001 grants to PUBLIC,
-- which nextval() needs).
DO $revoke$
DECLARE
	g record;
BEGIN
	FOR g IN SELECT DISTINCT c.oid::pg_catalog.regclass AS rel, c.relkind,
			CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0::oid THEN 'PUBLIC' ELSE pg_catalog.quote_ident(r.rolname::pg_catalog.text) END AS who
		FROM pg_catalog.pg_class AS c
		CROSS JOIN LATERAL (SELECT x.grantee, x.privilege_type FROM pg_catalog.aclexplode(c.relacl) AS x
			UNION ALL SELECT x.grantee, x.privilege_type FROM pg_catalog.pg_attribute AS t, pg_catalog.aclexplode(t.attacl) AS x
				WHERE t.attrelid OPERATOR(pg_catalog.=) c.oid) AS a
		LEFT JOIN pg_catalog.pg_roles AS r ON r.oid OPERATOR(pg_catalog.=) a.grantee
		WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY['ulid_flake_state'::regclass, 'ulid_flake_nodes'::regclass, 'ulid_flake_seq'::regclass])
			AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
			AND (c.relkind OPERATOR(pg_catalog.<>) 'S'::"char" OR a.privilege_type OPERATOR(pg_catalog.=) 'UPDATE')
	LOOP
		EXECUTE pg_catalog.format('REVOKE %s ON %s %s FROM %s', CASE WHEN g.relkind OPERATOR(pg_catalog.=) 'S'::"char" THEN 'UPDATE' ELSE 'ALL' END,
			CASE WHEN g.relkind OPERATOR(pg_catalog.=) 'S'::"char" THEN 'SEQUENCE' ELSE 'TABLE' END, g.rel, g.who);
	END LOOP;
END
$revoke$;
REVOKE ALL ON TABLE ulid_flake_nodes FROM PUBLIC;


-- ulid_flake_node_sync(mode, arg, force, node, cur_epoch, cur_sid): the one
-- function that writes the state and the ID functions' bodies, under the
-- state's row lock, calling no function of the install (its callers hand
-- it ulid_flake_epoch_ms() and ulid_flake_node_sid()). Refused first
-- (42501) while another role may write ulid_flake_state or _nodes or set
-- the sequence, or a trigger is on the tables. mode:
-- * 'offset' (ulid_flake_build): the offset arg, 0 to 1048574 (22003);
-- * 'epoch' (ulid_flake_set_epoch): arg, 0 to 244606207777792 Unix ms
--   (22023); refused (55000) unless force once rows may hold IDs (the
--   sequence has made IDs, no state row, a column's default draws from the
--   ID functions or the sequence, a column of ulid_flake_id): a new epoch
--   moves their times or repeats their timestamps;
-- * 'check', 'verify' (ulid_flake_verify: as 'check', but another system
--   or database is refused, 55000, instead of drawn a new offset, and it
--   returns at once when another session verified this server start),
--   'set' (SID arg), 'new' (SID arg), 'retire' (node):
--   the mesh, refused with "ulid_flake mesh:" and one SQLSTATE each:
--   55U01 the instance is not the one this node's row recorded (another
--     system or database; another timeline: a promoted replica or a clone;
--     none of the slots its peers read from: a copy started as a server of
--     its own) while other nodes' rows are here, until 'new' (a new
--     identity, offset and SID). A copy never takes its source's SID over,
--     failover or not: nothing here can see whether the source still
--     writes. Its SID is free again once 'retire' deletes its row;
--     with no other node's row, another system or database gets a new
--     identity and offset, another timeline keeps both;
--   55U02 another node's row holds the SID;
--   55U03 a subscription copies ulid_flake_state here;
--   55U04 a replicated column's default is ulid_flake(), which ignores
--     the SID, while the node has one or other nodes' rows are here.
--   Then it writes this node's row;
-- * 'arrived' (the triggers on ulid_flake_nodes, which 'check', 'set' and
--   'new' make): a row arrived that may change what the check says;
--   nothing is checked or refused, and the ID functions are written to run
--   the node's check ('verify') before their next ID.
-- It returns true when it drew a new offset. Its body holds the install
-- schema as a quoted literal (@schema@) and identifier (@s@), put in one
-- pass: neither is read again.
DO $create$
BEGIN
	EXECUTE pg_catalog.format($c$CREATE FUNCTION %I.ulid_flake_node_sync(mode text, arg bigint, force boolean, node uuid, cur_epoch bigint, cur_sid integer) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS %L$c$,
		pg_catalog.current_schema(), pg_catalog.array_to_string(ARRAY(SELECT pg_catalog.replace(p.piece, '@schema@', pg_catalog.quote_literal(pg_catalog.current_schema()))
			FROM pg_catalog.unnest(pg_catalog.string_to_array($f$
DECLARE
	schema  text := @schema@;
	me      uuid;
	st_sys  bigint;
	st_db   oid;
	epoch   bigint;
	sys     bigint;
	db      oid;
	tl      integer;
	own     boolean;
	own_sid integer;
	own_sys bigint;
	own_db  oid;
	own_tl  integer;
	others  text;
	moved   boolean;
	changed boolean;
	want_sid integer;
	holder  text;
	held_by uuid;
	fn      text := CASE mode WHEN 'new' THEN 'ulid_flake_new_node' ELSE 'ulid_flake_set_sid' END;
	bad     text;
	drawn   bigint;
	st_off  bigint;
	x       text;
	ms      text;
	started timestamp with time zone := pg_postmaster_start_time();
	-- This database: a template copy or a dump restored on the same server
	-- has the same start, and another database.
	here    oid := (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database());
	locked  boolean := true;
	st_started timestamp with time zone;
	slots   text[];
	own_slots text[];
	lost    text;
	on_own  boolean;
	in_mesh boolean;
	checked timestamp with time zone;
	guard   text;
	id      text;
	body    text;
	trig    name;
BEGIN
	-- ulid_flake_verify's: 'verified' returns whether this server start was
	-- verified; 'verify' returns whether the node is of a mesh (a SID, or
	-- other nodes' rows), at once when this start was verified.
	IF mode IN ('verified', 'verify') AND EXISTS (SELECT FROM @s@.ulid_flake_state AS s WHERE s.started_at = started AND s.database_oid = here) THEN
		RETURN mode = 'verified' OR (arg = 0 AND (cur_sid IS NOT NULL OR EXISTS (SELECT FROM @s@.ulid_flake_nodes AS n
			WHERE n.node_id IS DISTINCT FROM (SELECT s.node_id FROM @s@.ulid_flake_state AS s))));
	ELSIF mode = 'verified' THEN
		RETURN false;
	END IF;
	SELECT string_agg(w.what, ', ' ORDER BY w.what) INTO bad FROM (
		SELECT DISTINCT format('%s on %s.%I%s to %s', a.privilege_type, c.relnamespace::regnamespace, c.relname, COALESCE('.' || quote_ident(a.col), ''),
				CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(g.rolname) END) AS what
		FROM pg_class AS c
		CROSS JOIN LATERAL (SELECT NULL::name AS col, x.grantee, x.privilege_type FROM aclexplode(c.relacl) AS x
			UNION ALL SELECT t.attname, x.grantee, x.privilege_type FROM pg_attribute AS t, aclexplode(t.attacl) AS x
				WHERE t.attrelid = c.oid AND t.attnum > 0 AND NOT t.attisdropped) AS a
		LEFT JOIN pg_roles AS g ON g.oid = a.grantee
		WHERE c.oid IN (to_regclass(format('%I.ulid_flake_state', schema)), to_regclass(format('%I.ulid_flake_nodes', schema)), to_regclass(format('%I.ulid_flake_seq', schema)))
			AND a.grantee <> c.relowner AND NOT COALESCE(g.rolsuper, false)
			AND a.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER')
			AND (c.relkind <> 'S' OR a.privilege_type = 'UPDATE')
		UNION ALL SELECT format('trigger %I on %s.%I', tg.tgname, c.relnamespace::regnamespace, c.relname)
		FROM pg_trigger AS tg JOIN pg_class AS c ON c.oid = tg.tgrelid WHERE tg.tgrelid IN (to_regclass(format('%I.ulid_flake_state', schema)), to_regclass(format('%I.ulid_flake_nodes', schema))) AND NOT tg.tgisinternal
			AND tg.tgfoid IS DISTINCT FROM to_regprocedure(format('%I.ulid_flake_nodes_arrived()', schema))) AS w;
	IF bad IS NOT NULL AND mode <> 'arrived' THEN
		RAISE EXCEPTION 'ulid_flake: what the ID functions read is written by the install''s owner alone, not here: %', bad
			USING ERRCODE = '42501',
				HINT = 'REVOKE INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER on these tables (UPDATE on the sequence) from the roles named, drop the triggers named, and run it again.';
	END IF;
	IF mode = 'verify' THEN
		-- A session that may not lock the state row at once (another
		-- session's check, an operator's or any role's open transaction
		-- holds it; under REPEATABLE READ or SERIALIZABLE, another session
		-- updated it since this transaction's snapshot) runs the same checks
		-- on what it reads, and writes nothing: an ID waits for no other
		-- transaction.
		BEGIN
			SELECT s.node_id, s.system_id, s.database_oid, s.epoch_ms, s."offset", s.started_at INTO me, st_sys, st_db, epoch, st_off, st_started
				FROM @s@.ulid_flake_state AS s FOR UPDATE NOWAIT;
		EXCEPTION WHEN lock_not_available OR serialization_failure THEN
			locked := false;
			SELECT s.node_id, s.system_id, s.database_oid, s.epoch_ms, s."offset", s.started_at INTO me, st_sys, st_db, epoch, st_off, st_started
				FROM @s@.ulid_flake_state AS s;
		END;
	ELSE
		SELECT s.node_id, s.system_id, s.database_oid, s.epoch_ms, s."offset", s.started_at INTO me, st_sys, st_db, epoch, st_off, st_started
			FROM @s@.ulid_flake_state AS s FOR UPDATE;
	END IF;
	IF mode = 'verify' AND st_started = started AND st_db = here THEN
		-- Another session verified this node since the server started.
		RETURN arg = 0 AND (cur_sid IS NOT NULL OR EXISTS (SELECT FROM @s@.ulid_flake_nodes AS n WHERE n.node_id IS DISTINCT FROM me));
	END IF;
	epoch := COALESCE(epoch, cur_epoch);
	want_sid := cur_sid;

	IF mode = 'epoch' THEN
		IF arg IS NULL THEN
			RAISE EXCEPTION 'ulid_flake_set_epoch: the epoch is NULL, want Unix milliseconds' USING ERRCODE = '22004';
		END IF;
		IF arg < 0 OR arg > 244606207777792 THEN
			RAISE EXCEPTION 'ulid_flake_set_epoch: epoch % is not between 0 and 244606207777792 Unix ms (1970-01-01 to 9721-04-06)', arg
				USING ERRCODE = '22023';
		END IF;
		IF st_sys IS NULL THEN
			bad := 'ulid_flake_state has no row (restored from a dump, before Migrate ran?)';
		ELSIF NOT COALESCE(pg_sequence_last_value(to_regclass(format('%I.ulid_flake_seq', schema))) <= 2, false) THEN
			bad := 'the sequence ulid_flake_seq has made IDs';
		ELSE
			SELECT 'columns may hold IDs made under it: ' || string_agg(DISTINCT format('%s.%I.%I', c.relnamespace::regnamespace, c.relname, a.attname), ', ') INTO bad
			FROM pg_attribute AS a
			JOIN pg_class AS c ON c.oid = a.attrelid
			LEFT JOIN pg_attrdef AS ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
			WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p')
				AND (a.atttypid = to_regtype(format('%I.ulid_flake_id', schema))
					OR EXISTS (SELECT FROM pg_depend AS d
						WHERE d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
							AND ((d.refclassid = 'pg_proc'::regclass AND d.refobjid IN (to_regprocedure(format('%I.ulid_flake()', schema)),
									to_regprocedure(format('%I.ulid_flake_scalable(integer)', schema)), to_regprocedure(format('%I.ulid_flake_next(bigint)', schema))))
								OR (d.refclassid = 'pg_class'::regclass AND d.refobjid = to_regclass(format('%I.ulid_flake_seq', schema))))));
		END IF;
		IF arg <> epoch AND bad IS NOT NULL AND NOT COALESCE(force, false) THEN
			RAISE EXCEPTION 'ulid_flake_set_epoch: %, so IDs may exist under the epoch in force, %: a new one moves their times, a later one makes new IDs repeat their timestamps, and a statement in flight keeps the old one, so IDs can repeat', bad, epoch
				USING ERRCODE = '55000',
					HINT = 'force => true only while nothing inserts, and where every ID is to be read under the new epoch.';
		END IF;
		EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake_epoch_ms() RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE RETURN %L::bigint', schema, arg);
		UPDATE @s@.ulid_flake_state SET epoch_ms = arg;
		epoch := arg;
		IF st_sys IS NULL THEN
			-- No state row: the offset is drawn again, as Migrate would.
			drawn := floor(random() * 1048575)::bigint;
		END IF;
	ELSIF mode = 'offset' THEN
		IF arg IS NULL OR arg < 0 OR arg >= 1048575 THEN
			RAISE EXCEPTION 'ulid_flake: offset % not in 0..1048574', arg USING ERRCODE = '22003';
		END IF;
		drawn := arg;
	ELSIF mode = 'arrived' THEN
		-- Nothing is checked here (it runs in replication's apply, which
		-- must not fail): the bodies are written to check the node at
		-- their next ID, below.
		NULL;
	ELSIF mode = 'retire' THEN
		IF node = me THEN
			RAISE EXCEPTION 'ulid_flake_retire_node: node % is this one', node USING ERRCODE = '22023',
				HINT = 'Run it on another node of the mesh, or give this node a new identity with ulid_flake_new_node(sid).';
		END IF;
		DELETE FROM @s@.ulid_flake_nodes AS n WHERE n.node_id = node;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'ulid_flake_retire_node: no node % in ulid_flake_nodes', node USING ERRCODE = '22023';
		END IF;
		RETURN false;
	ELSE
		IF mode IN ('set', 'new') AND (arg < 0 OR arg > 31) THEN
			RAISE EXCEPTION '%: SID % is not in 0..31', fn, arg USING ERRCODE = '22023';
		END IF;
		IF mode = 'new' AND arg IS NULL THEN
			RAISE EXCEPTION 'ulid_flake_new_node: a new node of a mesh needs a SID of its own, not NULL' USING ERRCODE = '22004';
		END IF;
		SELECT c.system_identifier, d.oid INTO sys, db
			FROM pg_control_system() AS c, pg_database AS d WHERE d.datname = current_database();
		-- The timeline WAL is written on now: a promotion changes it at once
		-- (pg_control_checkpoint() shows it only after the next checkpoint).
		tl := ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer;
		moved := st_sys IS DISTINCT FROM sys OR st_db IS DISTINCT FROM db;
		IF me IS NULL THEN
			-- No identity in the state (no state row): a row this very
			-- instance wrote is this node's.
			SELECT n.node_id INTO me FROM @s@.ulid_flake_nodes AS n
				WHERE n.system_id = sys AND n.database_oid = db AND n.timeline = tl ORDER BY n.written_at DESC LIMIT 1;
		END IF;
		SELECT true, n.sid, n.system_id, n.database_oid, n.timeline, n.slots INTO own, own_sid, own_sys, own_db, own_tl, own_slots
			FROM @s@.ulid_flake_nodes AS n WHERE n.node_id = me;
		SELECT string_agg(format('node %s (SID %s)', n.node_id, COALESCE(n.sid::text, 'none')), ', ' ORDER BY n.node_id) INTO others
			FROM @s@.ulid_flake_nodes AS n WHERE n.node_id IS DISTINCT FROM me;
		-- The logical replication slots the node's peers read from. A copy
		-- of its data directory has none of them (pg_basebackup leaves them
		-- out), even when it keeps the system, database and timeline (a
		-- copy started as a server of its own, not as a standby).
		slots := ARRAY(SELECT r.slot_name::text FROM pg_replication_slots AS r
			WHERE r.database = current_database() AND r.slot_type = 'logical' AND NOT r.temporary ORDER BY 1);
		IF COALESCE(own AND cardinality(own_slots) > 0 AND NOT own_slots && slots, false) THEN
			lost := array_to_string(own_slots, ', ');
		END IF;
		changed := moved OR lost IS NOT NULL OR COALESCE(own AND (own_sys <> sys OR own_db <> db OR own_tl <> tl), false);
		-- A copy that kept the timeline (started as a server of its own, not
		-- promoted), or this very node whose peers' slots were dropped.
		on_own := lost IS NOT NULL AND NOT moved AND COALESCE(own_tl = tl, false);
		IF changed AND others IS NOT NULL AND mode <> 'new' THEN
			RAISE EXCEPTION 'ulid_flake mesh: this database is a copy of node % (SID %), which was system %, database %, timeline %, and is now system %, database %, timeline %; other nodes write here (%)',
				COALESCE(me::text, 'unknown'), COALESCE(own_sid::text, 'none'), COALESCE(own_sys, st_sys), COALESCE(own_db, st_db),
				COALESCE(own_tl::text, 'unknown'), sys, db,
				tl::text || CASE WHEN lost IS NOT NULL THEN format(', without the replication slots its peers read from (%s)', lost) ELSE '' END, others
				USING ERRCODE = '55U01',
					DETAIL = 'A pg_basebackup clone or a promoted replica keeps the node''s SID and offset: beside the node it copies, it makes the same IDs. Nothing here can see whether that node still writes, so a copy never takes its SID over, not even in a failover.',
					HINT = CASE WHEN on_own THEN format('If this server is that node itself and the slots (%s) were dropped on purpose (a peer rebuilt or leaving), retire those peers (SELECT %I.ulid_flake_retire_node(node)) or subscribe them again. ', lost, schema) ELSE '' END
						|| format('Make it a node of its own: SELECT %1$I.ulid_flake_new_node(sid::integer) with a SID no node uses; a copy beside a source that goes on drops its inherited subscriptions first (ALTER SUBSCRIPTION ... DISABLE, SET (slot_name = NONE), DROP). Once node %2$s is gone for good (a failover, an upgrade), SELECT %1$I.ulid_flake_retire_node(%3$L::uuid) on any node frees its SID (docs/deployments.md).', schema, COALESCE(me::text, 'unknown'), me);
		END IF;
		IF mode = 'verify' AND moved THEN
			RAISE EXCEPTION 'ulid_flake: this database''s state was recorded on system %, database %, and it is now on system %, database % (a restore, a copy or pg_upgrade): it makes no ID with the offset of the database it came from',
				COALESCE(st_sys::text, 'unknown (no state row)'), COALESCE(st_db::text, 'unknown'), sys, db
				USING ERRCODE = '55000',
					HINT = format('Run migrations.Migrate, or SELECT %I.ulid_flake_check_node() as the install''s owner, which draws a new offset; then make IDs again.', schema);
		END IF;
		IF mode = 'new' OR moved THEN
			drawn := floor(random() * 1048575)::bigint;
		END IF;
		IF mode = 'new' OR moved OR me IS NULL THEN
			-- The old row goes when it is this node's own (a new identity for
			-- an unchanged instance), or the row of the instance a copy was
			-- made from with no other node's beside it. A new node made from a
			-- copy in a mesh keeps its source's row.
			IF locked AND me IS NOT NULL AND ((mode = 'new' AND NOT changed) OR (mode <> 'new' AND moved)) THEN
				DELETE FROM @s@.ulid_flake_nodes AS n WHERE n.node_id = me;
			END IF;
			me := gen_random_uuid();
		END IF;
		IF mode IN ('set', 'new') THEN
			want_sid := arg::integer;
		END IF;
		IF want_sid IS NOT NULL THEN
			SELECT n.node_id, format('node %s (system %s, database %s, timeline %s, written %s)', n.node_id, n.system_id, n.database_oid, n.timeline, n.written_at)
				INTO held_by, holder FROM @s@.ulid_flake_nodes AS n WHERE n.sid = want_sid AND n.node_id <> me ORDER BY n.node_id LIMIT 1;
			IF holder IS NOT NULL THEN
				RAISE EXCEPTION 'ulid_flake mesh: SID % is %''s: two writable nodes with one SID make the same IDs', want_sid, holder
					USING ERRCODE = '55U02',
						HINT = format('Give this node a SID no node uses: SELECT %1$I.ulid_flake_set_sid(n::integer) (SELECT sid FROM %1$I.ulid_flake_nodes lists those in use). If that node has left the mesh for good, SELECT %1$I.ulid_flake_retire_node(%2$L::uuid) frees its SID.',
							schema, held_by);
			END IF;
		END IF;
		-- A subscription that copies ulid_flake_state here (a publication FOR
		-- ALL TABLES) gives this database another's offset and epoch.
		SELECT string_agg(DISTINCT quote_ident(sub.subname), ', ') INTO bad
		FROM pg_subscription_rel AS r JOIN pg_subscription AS sub ON sub.oid = r.srsubid
		WHERE r.srrelid = to_regclass(format('%I.ulid_flake_state', schema));
		IF bad IS NOT NULL THEN
			RAISE EXCEPTION 'ulid_flake mesh: ulid_flake_state is replicated into this database by subscription %: it would hold another database''s offset and epoch', bad
				USING ERRCODE = '55U03',
					HINT = 'Publish the application''s tables by name (not FOR ALL TABLES), then ALTER SUBSCRIPTION ... REFRESH PUBLICATION, and run this again.';
		END IF;
		IF mode <> 'verify' AND (want_sid IS NOT NULL OR others IS NOT NULL) THEN
			-- Columns whose default, or whose domain's default, is the
			-- stand-alone generator: ulid_flake() or the C extension's
			-- ulid_flake_next(). A wrapper function or a trigger is not seen.
			-- Not at the first ID after a start ('verify'): any role that may
			-- create a publication could stop every table's IDs with a table
			-- of its own; there ulid_flake() refuses each of its own calls.
			SELECT string_agg(DISTINCT format('%s.%I.%I', c.relnamespace::regnamespace, c.relname, a.attname), ', ') INTO bad
			FROM pg_attribute AS a
			JOIN pg_class AS c ON c.oid = a.attrelid
			LEFT JOIN pg_attrdef AS ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
			WHERE a.attnum > 0 AND NOT a.attisdropped
				AND EXISTS (SELECT FROM pg_depend AS d
					WHERE ((d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid)
							OR (d.classid = 'pg_type'::regclass AND d.objid = a.atttypid))
						AND d.refclassid = 'pg_proc'::regclass
						AND d.refobjid IN (to_regprocedure(format('%I.ulid_flake()', schema)), to_regprocedure(format('%I.ulid_flake_next(bigint)', schema))))
				AND (EXISTS (SELECT FROM pg_publication_tables AS p JOIN pg_namespace AS n ON n.nspname = p.schemaname
						WHERE n.oid = c.relnamespace AND p.tablename = c.relname)
					OR EXISTS (SELECT FROM pg_subscription_rel AS r WHERE r.srrelid = c.oid));
			IF bad IS NOT NULL THEN
				RAISE EXCEPTION 'ulid_flake mesh: % take their default from ulid_flake() (or the extension''s ulid_flake_next()), which ignores the node''s SID (%), and are replicated to or from other nodes: two nodes make the same IDs there',
					bad, CASE WHEN want_sid IS NULL THEN 'none, and other nodes write here' ELSE want_sid::text END
					USING ERRCODE = '55U04',
						HINT = format('On every node: ALTER TABLE ... ALTER COLUMN ... SET DEFAULT %I.ulid_flake_scalable(), and give each node a SID of its own.', schema);
			END IF;
		END IF;
		IF mode IN ('set', 'new') THEN
			EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake_node_sid() RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE RETURN %L::integer', schema, want_sid);
		END IF;
		IF locked AND mode IN ('check', 'set', 'new') THEN
			-- The triggers that check the node when a row arrives in
			-- ulid_flake_nodes, made or put back as they should be (missing,
			-- disabled, enabled for local writes only as a data-only
			-- restore's ENABLE TRIGGER ALL leaves them, or another body).
			-- They fire in replication's apply too (ENABLE ALWAYS), for
			-- another node's row holding this node's SID or reaching a node
			-- not yet of a mesh, for this node's own row changed to another
			-- SID, and for a TRUNCATE: then the ID functions check the node
			-- before their next ID ('arrived', through the domain
			-- ulid_flake_arrival), as after a restart. They
			-- wait for the state's row lock (the transaction that made the
			-- first ID after a start holds it to its end) whatever
			-- lock_timeout says, and an error fails the write: replication's
			-- apply stops and tries again, and no arrival is lost.
			body := replace($t$
DECLARE
	me      uuid;
	in_mesh boolean;
	own     integer;
	arrived boolean := false;
BEGIN
	-- Table reads and a cast only: a function called by name here could
	-- meet a planted overload; the domain's check is bound by object id.
	SELECT s.node_id, s.mesh INTO me, in_mesh FROM @x@.ulid_flake_state AS s;
	SELECT n.sid INTO own FROM @x@.ulid_flake_nodes AS n WHERE n.node_id = me;
	IF me IS NULL THEN
		-- Not checked yet (an install in progress, no state): the first
		-- ID checks it.
		RETURN NULL;
	ELSIF TG_OP = 'TRUNCATE' THEN
		arrived := true;
	ELSIF TG_OP = 'UPDATE' AND OLD.node_id = me THEN
		arrived := NEW.node_id IS DISTINCT FROM me OR NEW.sid IS DISTINCT FROM OLD.sid;
	ELSIF NEW.node_id IS DISTINCT FROM me THEN
		arrived := in_mesh IS NOT TRUE OR NEW.sid = own;
	END IF;
	IF arrived THEN
		PERFORM true::@x@.ulid_flake_arrival;
	END IF;
	RETURN NULL;
END
$t$, '@x@', quote_ident(schema));
			IF NOT EXISTS (SELECT FROM pg_proc AS p WHERE p.oid = to_regprocedure(format('%I.ulid_flake_nodes_arrived()', schema))
					AND p.prosrc = body AND p.prosecdef AND p.proconfig = ARRAY['search_path=pg_catalog, pg_temp', 'lock_timeout=0']) THEN
				EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake_nodes_arrived() RETURNS trigger LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = 0 AS %L',
					schema, body);
				EXECUTE format('REVOKE EXECUTE ON FUNCTION %I.ulid_flake_nodes_arrived() FROM PUBLIC', schema);
			END IF;
			IF (SELECT count(*) FROM pg_trigger AS tg
					WHERE tg.tgrelid = to_regclass(format('%I.ulid_flake_nodes', schema)) AND tg.tgname IN ('ulid_flake_nodes_arrived', 'ulid_flake_nodes_truncated')
						AND tg.tgfoid = to_regprocedure(format('%I.ulid_flake_nodes_arrived()', schema)) AND tg.tgenabled = 'A') <> 2 THEN
				FOR trig IN SELECT tg.tgname FROM pg_trigger AS tg WHERE tg.tgrelid = to_regclass(format('%I.ulid_flake_nodes', schema))
						AND tg.tgname IN ('ulid_flake_nodes_arrived', 'ulid_flake_nodes_truncated') LOOP
					EXECUTE format('DROP TRIGGER %I ON %I.ulid_flake_nodes', trig, schema);
				END LOOP;
				EXECUTE format('CREATE TRIGGER ulid_flake_nodes_arrived AFTER INSERT OR UPDATE ON %1$I.ulid_flake_nodes FOR EACH ROW EXECUTE FUNCTION %1$I.ulid_flake_nodes_arrived();
					CREATE TRIGGER ulid_flake_nodes_truncated AFTER TRUNCATE ON %1$I.ulid_flake_nodes FOR EACH STATEMENT EXECUTE FUNCTION %1$I.ulid_flake_nodes_arrived();
					ALTER TABLE %1$I.ulid_flake_nodes ENABLE ALWAYS TRIGGER ulid_flake_nodes_arrived, ENABLE ALWAYS TRIGGER ulid_flake_nodes_truncated', schema);
			END IF;
		END IF;
		IF locked THEN
			UPDATE @s@.ulid_flake_state SET node_id = me;
			DELETE FROM @s@.ulid_flake_nodes AS n WHERE n.node_id = me;
			INSERT INTO @s@.ulid_flake_nodes (node_id, sid, system_id, database_oid, timeline, written_at, slots) VALUES (me, want_sid, sys, db, tl, now(), slots);
		END IF;
	END IF;

	IF drawn IS NOT NULL THEN
		INSERT INTO @s@.ulid_flake_state AS s ("offset", system_id, database_oid, drawn_at, epoch_ms, node_id)
			SELECT drawn, c.system_identifier, d.oid, now(), epoch, me FROM pg_control_system() AS c, pg_database AS d
			WHERE d.datname = current_database()
			ON CONFLICT (singleton) DO UPDATE SET "offset" = EXCLUDED."offset", system_id = EXCLUDED.system_id,
				database_oid = EXCLUDED.database_oid, drawn_at = EXCLUDED.drawn_at, epoch_ms = EXCLUDED.epoch_ms, node_id = EXCLUDED.node_id;
	END IF;
	-- The server start since which this node is known: the identity checks
	-- above ran now. 'epoch' and 'offset' keep the one recorded.
	checked := CASE WHEN mode IN ('epoch', 'offset') THEN st_started WHEN mode = 'arrived' THEN NULL ELSE started END;
	in_mesh := want_sid IS NOT NULL OR EXISTS (SELECT FROM @s@.ulid_flake_nodes AS n WHERE n.node_id IS DISTINCT FROM me);
	IF locked AND (drawn IS NOT NULL OR mode IN ('epoch', 'set', 'new', 'check', 'arrived') OR checked IS DISTINCT FROM st_started
		OR in_mesh = EXISTS (SELECT FROM pg_depend AS d WHERE d.classid = 'pg_proc'::regclass AND d.objid = to_regprocedure(format('%I.ulid_flake()', schema))
			AND d.refclassid = 'pg_class'::regclass AND d.refobjid = to_regclass(format('%I.ulid_flake_seq', schema)))) THEN
		-- The ID functions, with the offset, the epoch, the SID and the
		-- server start as constants. On another server start (a restart, a
		-- promoted replica, a copy) they call ulid_flake_verify first (a cast
		-- to the domain ulid_flake_verified, whose check it is), which
		-- runs the checks above ('verify') before the first ID. On a node with
		-- a SID, or other nodes' rows, ulid_flake() makes no ID: its verify
		-- refuses (55U04).
		UPDATE @s@.ulid_flake_state SET started_at = checked, mesh = in_mesh;
		-- The start as ISO 8601 in UTC, whatever the caller's DateStyle and
		-- TimeZone (an abbreviation such as IST is read as another zone's
		-- before PostgreSQL 18).
		-- With the database's name: a copy on the same server (CREATE
		-- DATABASE ... TEMPLATE, a restore) has another; a renamed database
		-- runs the check per ID until the next check (Migrate) writes its new name.
		guard := format('pg_catalog.pg_postmaster_start_time() OPERATOR(pg_catalog.=) %L::timestamp with time zone AND pg_catalog.current_database() OPERATOR(pg_catalog.=) %L::name',
			to_char(checked AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00"'), current_database());
		x  := format('pg_catalog.mod(pg_catalog.mod(pg_catalog.nextval(%L::regclass), 1048575::bigint) OPERATOR(pg_catalog.+) %s::bigint, 1048575::bigint)',
			format('%I.ulid_flake_seq', schema), COALESCE(drawn, st_off));
		ms := format('((pg_catalog.floor(pg_catalog.date_part(%L::text, pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000::double precision)::bigint OPERATOR(pg_catalog.-) %s::bigint)::%I.ulid_flake_timestamp::bigint OPERATOR(pg_catalog.<<) 20)',
			'epoch', epoch, schema);
		id := format('GREATEST(%s OPERATOR(pg_catalog.|) pg_catalog.mod((%s) OPERATOR(pg_catalog.*) 32::bigint, 1048575::bigint), 1::bigint)', ms, x);
		EXECUTE format('CREATE OR REPLACE FUNCTION %1$I.ulid_flake() RETURNS bigint LANGUAGE sql VOLATILE PARALLEL UNSAFE
			RETURN CASE WHEN %2$s THEN %3$s WHEN false::%1$I.ulid_flake_verified::boolean THEN %3$s END',
			schema, CASE WHEN in_mesh THEN 'false' ELSE guard END, CASE WHEN in_mesh THEN 'NULL::bigint' ELSE id END);
		id := format('GREATEST(%s OPERATOR(pg_catalog.|) (((%s) OPERATOR(pg_catalog.&) 32767::bigint) OPERATOR(pg_catalog.<<) 5)
				OPERATOR(pg_catalog.|) COALESCE(sid, %L::integer)::%I.ulid_flake_sid::bigint, 1::bigint)', ms, x, want_sid, schema);
		EXECUTE format('CREATE OR REPLACE FUNCTION %1$I.ulid_flake_scalable(sid integer DEFAULT NULL) RETURNS bigint LANGUAGE sql VOLATILE PARALLEL UNSAFE
			RETURN CASE WHEN %2$s THEN %3$s WHEN true::%1$I.ulid_flake_verified::boolean THEN %3$s END',
			schema, guard, id);
	END IF;
	IF mode = 'verify' THEN
		RETURN arg = 0 AND in_mesh;
	END IF;
	RETURN drawn IS NOT NULL;
END
$f$, '@s@')) WITH ORDINALITY AS p(piece, n) ORDER BY p.n), pg_catalog.quote_ident(pg_catalog.current_schema())));
END
$create$;

-- The owner's functions: each checks the schema (ulid_flake_alone) and
-- calls ulid_flake_node_sync with what the ID functions read, every call
-- bound by object id. ulid_flake_check_node(), which Migrate runs at every
-- start, draws a new offset (and returns true) on a copy: the state was
-- recorded on another system or database, or is missing (pg_dump -s).
-- ulid_flake_set_sid(sid) fixes the SID ulid_flake_scalable() uses when
-- its call gives none (NULL: none; such a call is refused, 23514).
-- ulid_flake_new_node(sid): this database is a new node (a clone turned
-- writer, a promoted replica, an upgraded server: a copy never keeps its
-- source's SID in a mesh, whether or not the source still writes).
-- ulid_flake_retire_node(node)
-- deletes the row of a node that has left the mesh for good (22023 for
-- this node's own, or none), which frees its SID. They keep search_path
-- = the install schema, pg_temp (SET ... FROM CURRENT) for current_schema().
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()) OPERATOR(pg_catalog.||) ', pg_temp', true);
CREATE OR REPLACE FUNCTION ulid_flake_check_node() RETURNS boolean LANGUAGE sql VOLATILE SET search_path FROM CURRENT
BEGIN ATOMIC
	SELECT ulid_flake_alone(pg_catalog.current_schema());
	SELECT ulid_flake_node_sync('check'::text, NULL::bigint, false, NULL::uuid, ulid_flake_epoch_ms(), ulid_flake_node_sid());
END;
CREATE OR REPLACE FUNCTION ulid_flake_build(new_offset bigint) RETURNS void LANGUAGE sql VOLATILE SET search_path FROM CURRENT
BEGIN ATOMIC
	SELECT ulid_flake_alone(pg_catalog.current_schema());
	SELECT ulid_flake_node_sync('offset'::text, new_offset, false, NULL::uuid, ulid_flake_epoch_ms(), ulid_flake_node_sid());
END;
CREATE FUNCTION ulid_flake_set_epoch(epoch_ms bigint, force boolean DEFAULT false) RETURNS void LANGUAGE sql VOLATILE SET search_path FROM CURRENT
BEGIN ATOMIC
	SELECT ulid_flake_alone(pg_catalog.current_schema());
	SELECT ulid_flake_node_sync('epoch'::text, epoch_ms, force, NULL::uuid, ulid_flake_epoch_ms(), ulid_flake_node_sid());
END;
CREATE FUNCTION ulid_flake_set_sid(sid integer) RETURNS void LANGUAGE sql VOLATILE SET search_path FROM CURRENT
BEGIN ATOMIC
	SELECT ulid_flake_alone(pg_catalog.current_schema());
	SELECT ulid_flake_node_sync('set'::text, sid::bigint, false, NULL::uuid, ulid_flake_epoch_ms(), ulid_flake_node_sid());
END;
CREATE FUNCTION ulid_flake_new_node(sid integer) RETURNS void LANGUAGE sql VOLATILE SET search_path FROM CURRENT
BEGIN ATOMIC
	SELECT ulid_flake_alone(pg_catalog.current_schema());
	SELECT ulid_flake_node_sync('new'::text, sid::bigint, false, NULL::uuid, ulid_flake_epoch_ms(), ulid_flake_node_sid());
END;
CREATE FUNCTION ulid_flake_retire_node(node uuid) RETURNS void LANGUAGE sql VOLATILE SET search_path FROM CURRENT
BEGIN ATOMIC
	SELECT ulid_flake_alone(pg_catalog.current_schema());
	SELECT ulid_flake_node_sync('retire'::text, NULL::bigint, false, node, ulid_flake_epoch_ms(), ulid_flake_node_sid());
END;
REVOKE EXECUTE ON FUNCTION ulid_flake_node_sync(text, bigint, boolean, uuid, bigint, integer), ulid_flake_set_epoch(bigint, boolean),
	ulid_flake_set_sid(integer), ulid_flake_new_node(integer), ulid_flake_retire_node(uuid) FROM PUBLIC;

-- ulid_flake_verify(scalable): what the ID functions call first on a
-- server start other than the one their bodies were written on (a
-- restart, a promoted replica, a copy): the owner's check of this node
-- (ulid_flake_node_sync's 'verify', the checks of ulid_flake_check_node()
-- but one: a database on another system or database is refused, 55000,
-- until Migrate or the check draws its offset), which writes the bodies
-- again with this start. It returns true, or refuses as the check does
-- (55U01 to 55U05); called for ulid_flake() (scalable false) on a node
-- of a mesh, 55U04. The first session after a start runs it under the
-- state's row lock and writes the bodies; a session that may not take the
-- lock at once (another transaction holds it: another check, or any
-- role's open transaction) runs the same checks without writing, and waits
-- for none. Any role may call it, as it may call ulid_flake().
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()) OPERATOR(pg_catalog.||) ', pg_temp', true);
CREATE FUNCTION ulid_flake_verify(scalable boolean) RETURNS boolean LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path FROM CURRENT
BEGIN ATOMIC
	SELECT ulid_flake_alone(pg_catalog.current_schema())
		WHERE NOT ulid_flake_node_sync('verified'::text, NULL::bigint, false, NULL::uuid, ulid_flake_epoch_ms(), ulid_flake_node_sid());
	SELECT ulid_flake_raise('55U04'::text, pg_catalog.format('ulid_flake mesh: ulid_flake() ignores the node''s SID (%s) in a mesh, where two nodes would make the same IDs: call %I.ulid_flake_scalable()'::text,
			COALESCE(ulid_flake_node_sid()::text, 'none, and other nodes write here'::text), pg_catalog.current_schema()), NULL::boolean)
		FROM (SELECT ulid_flake_node_sync('verify'::text, CASE WHEN scalable THEN 1::bigint ELSE 0::bigint END, false, NULL::uuid,
			ulid_flake_epoch_ms(), ulid_flake_node_sid()) AS refused OFFSET 0) AS v
		WHERE v.refused;
	SELECT true;
END;
GRANT EXECUTE ON FUNCTION ulid_flake_verify(boolean) TO PUBLIC;
-- The ID functions reach it through this domain: a cast to it calls
-- ulid_flake_verify(scalable) as its check, bound by object id when the
-- domain is made, so the bodies that ulid_flake_node_sync writes call no
-- function of the install by name.
CREATE DOMAIN ulid_flake_verified AS boolean
	CONSTRAINT "ulid_flake: checked at the first ID after a server start" CHECK (ulid_flake_verify(VALUE));

-- ulid_flake_arrived(ok): what the triggers on ulid_flake_nodes call (a
-- cast to the domain ulid_flake_arrival, whose check it is, so that they
-- call no function of the install by name) when a row arrived that may
-- change what the node's check says: ulid_flake_node_sync's 'arrived'.
-- The install's owner's alone, as the triggers' function is.
CREATE FUNCTION ulid_flake_arrived(ok boolean) RETURNS boolean LANGUAGE sql VOLATILE SET search_path FROM CURRENT
BEGIN ATOMIC
	SELECT ulid_flake_node_sync('arrived'::text, NULL::bigint, false, NULL::uuid, ulid_flake_epoch_ms(), ulid_flake_node_sid());
	SELECT true;
END;
REVOKE EXECUTE ON FUNCTION ulid_flake_arrived(boolean) FROM PUBLIC;
CREATE DOMAIN ulid_flake_arrival AS boolean
	CONSTRAINT "ulid_flake: a row arrived in ulid_flake_nodes" CHECK (ulid_flake_arrived(VALUE));


-- This node's row, and the ID functions: with a new offset on a database
-- the state was not recorded on, else with the recorded one.
DO $build$
BEGIN
	IF NOT ulid_flake_check_node() THEN
		PERFORM ulid_flake_build(s."offset") FROM ulid_flake_state AS s;
	END IF;
END
$build$;
