-- ulidflake 008: what the generators read at run time is the install
-- owner's alone.
--
-- * The node's SID is fixed by the install's owner, as the epoch is:
--   ulid_flake_scalable() with no argument reads ulid_flake_node_sid(), an
--   SQL function holding a constant that only ulid_flake_set_sid(sid), for
--   the owner, replaces. The setting ulid_flake.sid is no longer read: any
--   role may SET it, so a role that may not write the key could pick
--   another node's SID. This file takes the SID version 7 gave the
--   database's sessions (ALTER DATABASE ... SET ulid_flake.sid, else ALTER
--   ROLE ALL, else the server's files), and refuses (55000) when a role's
--   own setting or the installing session's start gives another.
-- * ulid_flake_set_epoch refuses without force whenever rows may hold IDs:
--   also when there is no state row (a schema-only restore before Migrate),
--   and when a column's default draws from the generators or the sequence,
--   or a column is of the domain ulid_flake_id.
-- * A mesh knows its writers: each node of a multi-writer mesh keeps a row
--   in ulid_flake_nodes (its node identity, its SID, its system, database
--   and timeline), which the mesh replicates. ulid_flake_set_sid refuses a
--   SID another node's row holds; ulid_flake_check_node() (Migrate, at
--   every start) refuses that too, a copy of a node (a clone, a promoted
--   replica, a restore) while other nodes' rows are here, until
--   ulid_flake_new_node(sid) or ulid_flake_adopt_node() says which it is,
--   and a replicated table whose default is ulid_flake(). Each refusal has
--   a SQLSTATE of its own in class 55 (55U01 to 55U04, below), and a
--   message that starts "ulid_flake mesh:". Nothing runs per insert.
-- * ulid_flake_build writes its bodies with pg_catalog.mod() (the same
--   int8mod as the % operator, so the same IDs), and reaches the schema's
--   name only as a quoted literal.
--
-- As in 004 and 007, every statement runs with search_path pinned to the
-- install schema; bodies are SQL-standard with qualified operators, or
-- PL/pgSQL with search_path = pg_catalog, pg_temp.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- The install schema is the installer's alone (ulid_flake_alone, version 5).
SELECT ulid_flake_alone(pg_catalog.current_schema());

ALTER DOMAIN ulid_flake_sid RENAME CONSTRAINT "no SID: give ulid_flake_scalable(sid) or SET ulid_flake.sid"
	TO "no SID: give ulid_flake_scalable(sid) or ulid_flake_set_sid(n)";

-- ulid_flake_start_sid(): the value of ulid_flake.sid this session
-- started with (the server's files, ALTER DATABASE/ROLE ... SET, the
-- connection's options), without its own SET; for this file only.
CREATE FUNCTION ulid_flake_start_sid() RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	-- SET LOCAL is undone when the function returns (it has a SET clause).
	SET LOCAL ulid_flake.sid TO DEFAULT;
	RETURN coalesce(current_setting('ulid_flake.sid', true), '');
END
$f$;

-- The SID version 7 gave this database's sessions: the database's
-- setting, else all roles', else the server's files', else none. Refused
-- (55000) when a role's own setting, or this session's start, says
-- another (a file the installer may not read shows there too).
DO $sid$
DECLARE
	schema  text := pg_catalog.current_schema();
	db      oid := (SELECT d.oid FROM pg_catalog.pg_database AS d WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database());
	file    text;
	unread  boolean := false;
	chosen  text;
	sid     integer;
	clash   text;
BEGIN
	BEGIN
		SELECT f.setting INTO file FROM pg_catalog.pg_file_settings AS f
			WHERE pg_catalog.lower(f.name) OPERATOR(pg_catalog.=) 'ulid_flake.sid' AND f.applied ORDER BY f.seqno DESC LIMIT 1;
	EXCEPTION WHEN insufficient_privilege THEN
		unread := true;
	END;
	WITH src AS (
		SELECT CASE WHEN r.setrole OPERATOR(pg_catalog.<>) 0::oid THEN pg_catalog.format('ALTER ROLE %I', a.rolname)
				OPERATOR(pg_catalog.||) CASE WHEN r.setdatabase OPERATOR(pg_catalog.=) 0::oid THEN '' ELSE ' IN DATABASE' END
			WHEN r.setdatabase OPERATOR(pg_catalog.=) 0::oid THEN 'ALTER ROLE ALL' ELSE 'ALTER DATABASE' END AS who,
			r.setrole OPERATOR(pg_catalog.<>) 0::oid AS per_role,
			CASE WHEN r.setdatabase OPERATOR(pg_catalog.=) 0::oid THEN 2 ELSE 1 END AS rank,
			pg_catalog.substr(c.kv, pg_catalog.strpos(c.kv, '=') OPERATOR(pg_catalog.+) 1) AS v
		FROM pg_catalog.pg_db_role_setting AS r
		CROSS JOIN LATERAL pg_catalog.unnest(r.setconfig) AS c(kv)
		LEFT JOIN pg_catalog.pg_roles AS a ON a.oid OPERATOR(pg_catalog.=) r.setrole
		WHERE r.setdatabase OPERATOR(pg_catalog.=) ANY (ARRAY[0::oid, db])
			AND pg_catalog.lower(pg_catalog.split_part(c.kv, '=', 1)) OPERATOR(pg_catalog.=) 'ulid_flake.sid'
		UNION ALL SELECT 'the server''s configuration files', false, 3, file
		UNION ALL SELECT 'this session''s start (the connection''s options, the installing role''s setting)', true, 0, ulid_flake_start_sid()::pg_catalog.text),
	parsed AS (
		SELECT src.*, CASE WHEN src.v OPERATOR(pg_catalog.=) '' THEN NULL
			WHEN src.v OPERATOR(pg_catalog.~) E'^\\s*[+]?[0-9]{1,9}\\s*$' THEN pg_catalog.regexp_replace(src.v, E'[\\s+]', '', 'g')::integer
			ELSE -1 END AS n
		FROM src WHERE src.v IS NOT NULL),
	pick AS (
		SELECT COALESCE((SELECT p.v FROM parsed AS p WHERE NOT p.per_role ORDER BY p.rank LIMIT 1), '') AS v,
			(SELECT p.n FROM parsed AS p WHERE NOT p.per_role ORDER BY p.rank LIMIT 1) AS n)
	SELECT pick.v, (SELECT pg_catalog.string_agg(p.who OPERATOR(pg_catalog.||) ': ' OPERATOR(pg_catalog.||) p.v, '; ')
			FROM parsed AS p WHERE p.per_role AND p.n IS DISTINCT FROM pick.n)
		INTO chosen, clash FROM pick;
	IF chosen OPERATOR(pg_catalog.<>) '' THEN
		sid := chosen::ulid_flake_sid_setting::integer::ulid_flake_sid;
	END IF;
	IF clash IS NOT NULL THEN
		RAISE EXCEPTION 'ulid_flake: version 8 fixes the node''s SID at % (the database''s setting, else all roles'', else the server''s files), but other sessions had another (%)%', COALESCE(sid::text, 'none'), clash,
			CASE WHEN unread THEN pg_catalog.format(', and role %s may not read the server''s configuration files (pg_file_settings)', CURRENT_USER) ELSE '' END
			USING ERRCODE = '55000',
				HINT = 'Make the settings agree (ALTER DATABASE ... SET ulid_flake.sid, and RESET the others), or have a superuser run it, then install from a new connection.';
	END IF;
	EXECUTE pg_catalog.format('CREATE FUNCTION %I.ulid_flake_node_sid() RETURNS integer
		LANGUAGE sql STABLE PARALLEL SAFE RETURN %L::integer', schema, sid);
END
$sid$;
DROP FUNCTION ulid_flake_start_sid();

-- The functions that name the install schema hold it as a quoted literal:
-- each body below says @schema@ where it goes. ulid_flake_create lives
-- for the length of this file.
--
-- Each of them that reads or calls by name what the generators read
-- starts with @guard@ (it declares schema, the install schema, and self,
-- its own signature): it refuses (42501) to go on when the install
-- schema, ulid_flake_state, ulid_flake_nodes, ulid_flake_seq, or a
-- function it calls by name (ulid_flake_build, ulid_flake_node_sync,
-- ulid_flake_epoch_ms, ulid_flake_node_sid) belongs to a role that is
-- neither the owner of the function running nor a superuser, or when a
-- role other than their owner may write the tables or set the sequence.
-- A database owner who did not install (public belongs to
-- pg_database_owner) could otherwise drop a table and make one whose
-- trigger runs as the superuser who calls ulid_flake_check_node(); a role
-- with UPDATE on ulid_flake_state could change the epoch the C extension
-- reads.
CREATE FUNCTION ulid_flake_create(schema text, signature text, body text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	guard constant text := $guard$
	<<guard>>
	DECLARE
		mine      oid := (SELECT p.proowner FROM pg_proc AS p WHERE p.oid = to_regprocedure(format('%I.%s', schema, self)));
		untrusted text;
	BEGIN
		SELECT string_agg(w.what, ', ' ORDER BY w.what) INTO untrusted FROM (
			SELECT format('schema %I (owner %I)', n.nspname, r.rolname) AS what
			FROM pg_namespace AS n
			JOIN pg_database AS d ON d.datname = current_database()
			JOIN pg_roles AS r ON r.oid = CASE WHEN n.nspowner = to_regrole('pg_database_owner') THEN d.datdba ELSE n.nspowner END
			WHERE n.nspname = schema AND NOT r.rolsuper AND r.oid IS DISTINCT FROM mine
			UNION ALL
			SELECT format('%s (owner %I)', c.oid::regclass, r.rolname)
			FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace JOIN pg_roles AS r ON r.oid = c.relowner
			WHERE n.nspname = schema AND c.relname IN ('ulid_flake_state', 'ulid_flake_nodes', 'ulid_flake_seq')
				AND NOT r.rolsuper AND r.oid IS DISTINCT FROM mine
			UNION ALL
			SELECT format('%s (owner %I)', p.oid::regprocedure, r.rolname)
			FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace JOIN pg_roles AS r ON r.oid = p.proowner
			WHERE n.nspname = schema
				AND p.proname IN ('ulid_flake_build', 'ulid_flake_node_sync', 'ulid_flake_epoch_ms', 'ulid_flake_node_sid', 'ulid_flake_check_node', 'ulid_flake_set_sid')
				AND NOT r.rolsuper AND r.oid IS DISTINCT FROM mine
			UNION ALL
			SELECT format('%s on %s to %s', a.privilege_type, c.oid::regclass,
					CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(g.rolname) END)
			FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
			CROSS JOIN LATERAL aclexplode(c.relacl) AS a
			LEFT JOIN pg_roles AS g ON g.oid = a.grantee
			WHERE n.nspname = schema AND c.relname IN ('ulid_flake_state', 'ulid_flake_nodes', 'ulid_flake_seq')
				AND a.grantee <> c.relowner AND NOT coalesce(g.rolsuper, false)
				AND a.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER')
			UNION ALL
			SELECT format('%s on %s.%I to %s', a.privilege_type, c.oid::regclass, t.attname,
					CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(g.rolname) END)
			FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
			JOIN pg_attribute AS t ON t.attrelid = c.oid AND t.attnum > 0 AND NOT t.attisdropped
			CROSS JOIN LATERAL aclexplode(t.attacl) AS a
			LEFT JOIN pg_roles AS g ON g.oid = a.grantee
			WHERE n.nspname = schema AND c.relname IN ('ulid_flake_state', 'ulid_flake_nodes')
				AND a.grantee <> c.relowner AND NOT coalesce(g.rolsuper, false)
				AND a.privilege_type IN ('INSERT', 'UPDATE')
			UNION ALL
			SELECT format('trigger %I on %s', tg.tgname, c.oid::regclass)
			FROM pg_trigger AS tg JOIN pg_class AS c ON c.oid = tg.tgrelid JOIN pg_namespace AS n ON n.oid = c.relnamespace
			WHERE n.nspname = schema AND c.relname IN ('ulid_flake_state', 'ulid_flake_nodes') AND NOT tg.tgisinternal) AS w;
		IF untrusted IS NOT NULL THEN
			RAISE EXCEPTION 'ulid_flake: what the generators read belongs to the install''s owner (%) alone, not here: %', coalesce(mine::regrole::text, 'unknown'), untrusted
				USING ERRCODE = '42501',
					HINT = 'Give the schema and these objects back to the install''s owner (ALTER ... OWNER TO, or REASSIGN OWNED), drop what another role made in their place (triggers included), and REVOKE INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER on them from other roles; then run it again.';
		END IF;
	END guard;
$guard$;
BEGIN
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.%s LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS %L',
		schema, signature, pg_catalog.replace(pg_catalog.replace(body, '@guard@', guard), '@schema@', pg_catalog.quote_literal(schema)));
END
$f$;

-- The tables the generators read are written by the install's owner alone:
-- grants made by ALTER DEFAULT PRIVILEGES or GRANT ... ON ALL TABLES IN
-- SCHEMA are taken back (the sequence keeps the USAGE that 001 grants to
-- PUBLIC, which nextval() needs).
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
		WHERE c.relnamespace OPERATOR(pg_catalog.=) pg_catalog.to_regnamespace(pg_catalog.quote_ident(pg_catalog.current_schema()))
			AND c.relname OPERATOR(pg_catalog.=) ANY (ARRAY['ulid_flake_state', 'ulid_flake_seq']::name[])
			AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
			AND (c.relkind OPERATOR(pg_catalog.<>) 'S'::"char" OR a.privilege_type OPERATOR(pg_catalog.=) 'UPDATE')
	LOOP
		IF g.relkind OPERATOR(pg_catalog.=) 'S'::"char" THEN
			EXECUTE pg_catalog.format('REVOKE UPDATE ON SEQUENCE %s FROM %s', g.rel, g.who);
		ELSE
			EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %s FROM %s', g.rel, g.who);
		END IF;
	END LOOP;
END
$revoke$;

-- ulid_flake_build(offset), as in 007, with the SID from
-- ulid_flake_node_sid() instead of the setting.
SELECT ulid_flake_create(pg_catalog.current_schema()::pg_catalog.text, 'ulid_flake_build(new_offset bigint) RETURNS void'::pg_catalog.text, $body$
DECLARE
	self   text := 'ulid_flake_build(bigint)';
	schema text := @schema@;
	x      text;
	ms     text;
BEGIN
	@guard@
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
$body$::pg_catalog.text);

-- ulid_flake_set_epoch(ms, force), as in 007, and refused without force
-- whenever rows may hold IDs made under the epoch in force: the sequence
-- has made IDs, there is no state row (the data of a dump may be there
-- before Migrate), or a column takes its default from the generators or
-- the sequence, or is of the domain ulid_flake_id.
SELECT ulid_flake_create(pg_catalog.current_schema()::pg_catalog.text, 'ulid_flake_set_epoch(epoch_ms bigint, force boolean DEFAULT false) RETURNS void'::pg_catalog.text, $body$
DECLARE
	self   text := 'ulid_flake_set_epoch(bigint,boolean)';
	schema text := @schema@;
	cur    bigint;
	used   text;
BEGIN
	@guard@
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
$body$::pg_catalog.text);

-- A mesh knows its writers. Every node of a multi-writer mesh (nodes that
-- replicate to each other with logical replication) keeps one row in
-- ulid_flake_nodes: its node identity (drawn at random, kept in
-- ulid_flake_state, which is never published), its SID, and what
-- identifies the physical instance: the system identifier, the database's
-- OID and the timeline it writes WAL on (a promotion, that is a failover or
-- a clone turned writer, starts a new one). The mesh publishes the table
-- with the application's tables, so every node reads every node's row.
-- A node writes only its own row, always as DELETE then INSERT of its key:
-- a peer that has the row replaces it, one that does not (it subscribed
-- later) inserts it, and neither stops its subscription (a DELETE of a
-- missing row is skipped; PostgreSQL 18 counts it as delete_missing).
-- Nothing here runs per insert: the rows are written and checked by
-- ulid_flake_set_sid and by ulid_flake_check_node(), which Migrate runs at
-- every start.
ALTER TABLE ulid_flake_state ADD COLUMN node_id uuid;

CREATE TABLE ulid_flake_nodes (
	node_id      uuid PRIMARY KEY,
	sid          integer CHECK (sid OPERATOR(pg_catalog.>=) 0 AND sid OPERATOR(pg_catalog.<=) 31),
	system_id    bigint NOT NULL,
	database_oid oid NOT NULL,
	timeline     integer NOT NULL,
	written_at   timestamp with time zone NOT NULL
);
REVOKE ALL ON TABLE ulid_flake_nodes FROM PUBLIC;
DO $revoke$
DECLARE
	who text;
BEGIN
	FOR who IN SELECT DISTINCT pg_catalog.quote_ident(r.rolname::pg_catalog.text)
		FROM pg_catalog.pg_class AS c
		CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) AS a
		JOIN pg_catalog.pg_roles AS r ON r.oid OPERATOR(pg_catalog.=) a.grantee
		WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(pg_catalog.format('%I.ulid_flake_nodes', pg_catalog.current_schema()))
			AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %I.ulid_flake_nodes FROM %s', pg_catalog.current_schema(), who);
	END LOOP;
END
$revoke$;

-- ulid_flake_node_sync(mode, sid): what the functions below share, under
-- the state's row lock. mode is 'check' (ulid_flake_check_node), 'set'
-- (ulid_flake_set_sid), 'new' (ulid_flake_new_node) or 'adopt'
-- (ulid_flake_adopt_node). Refused, every message starting "ulid_flake
-- mesh:", with a SQLSTATE per refusal that migrations.ErrMesh names, when:
-- * 55U01: the instance is not the one this node's row recorded (another
--   system or database: a restore, a template; another timeline: a
--   promoted replica or a pg_basebackup clone) while other nodes' rows are
--   here, until the operator says whether it replaces that node ('adopt')
--   or is a new node ('new': a new identity, a new offset, its own SID).
--   With no other node's row, it is recorded as before: another system or
--   database gets a new identity and a new offset, another timeline keeps
--   both;
-- * 55U02: another node's row holds the SID;
-- * 55U03: a subscription copies ulid_flake_state into this database;
-- * 55U04: the node has a SID, or other nodes' rows are here, and a column
--   of a table it publishes, or receives by subscription, takes its
--   default from ulid_flake(), which ignores the SID.
-- Then it writes this node's row. It returns true when it drew a new
-- offset.
SELECT ulid_flake_create(pg_catalog.current_schema()::pg_catalog.text, 'ulid_flake_node_sync(mode text, new_sid integer) RETURNS boolean'::pg_catalog.text, $body$
DECLARE
	self   text := 'ulid_flake_node_sync(text,integer)';
	schema  text := @schema@;
	me      uuid;
	st_sys  bigint;
	st_db   oid;
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
	sid     integer;
	holder  text;
	held_by uuid;
	changed boolean;
	fn      text := CASE mode WHEN 'new' THEN 'ulid_flake_new_node' ELSE 'ulid_flake_set_sid' END;
	bad     text;
	drawn   boolean := false;
BEGIN
	@guard@
	IF mode IN ('set', 'new') AND (new_sid < 0 OR new_sid > 31) THEN
		RAISE EXCEPTION '%: SID % is not in 0..31', fn, new_sid USING ERRCODE = '22023';
	END IF;
	IF mode = 'new' AND new_sid IS NULL THEN
		RAISE EXCEPTION 'ulid_flake_new_node: a new node of a mesh needs a SID of its own, not NULL' USING ERRCODE = '22004';
	END IF;
	EXECUTE format('SELECT s.node_id, s.system_id, s.database_oid FROM %I.ulid_flake_state AS s FOR UPDATE', schema)
		INTO me, st_sys, st_db;
	SELECT c.system_identifier, d.oid INTO sys, db
		FROM pg_control_system() AS c, pg_database AS d WHERE d.datname = current_database();
	-- The timeline WAL is written on now: a promotion changes it at once
	-- (pg_control_checkpoint() shows it only after the next checkpoint).
	tl := ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer;
	moved := st_sys IS DISTINCT FROM sys OR st_db IS DISTINCT FROM db;
	IF me IS NULL THEN
		-- No identity in the state (no state row): a row this very
		-- instance wrote is this node's.
		EXECUTE format('SELECT n.node_id FROM %I.ulid_flake_nodes AS n
			WHERE n.system_id = $1 AND n.database_oid = $2 AND n.timeline = $3 ORDER BY n.written_at DESC LIMIT 1', schema)
			INTO me USING sys, db, tl;
	END IF;
	EXECUTE format('SELECT true, n.sid, n.system_id, n.database_oid, n.timeline FROM %I.ulid_flake_nodes AS n WHERE n.node_id = $1', schema)
		INTO own, own_sid, own_sys, own_db, own_tl USING me;
	EXECUTE format('SELECT string_agg(format(%L, n.node_id, coalesce(n.sid::text, %L)), %L ORDER BY n.node_id)
		FROM %I.ulid_flake_nodes AS n WHERE n.node_id IS DISTINCT FROM $1', 'node %s (SID %s)', 'none', ', ', schema)
		INTO others USING me;
	changed := moved OR coalesce(own AND (own_sys <> sys OR own_db <> db OR own_tl <> tl), false);
	IF changed AND others IS NOT NULL AND mode NOT IN ('new', 'adopt') THEN
		RAISE EXCEPTION 'ulid_flake mesh: this database is a copy of node % (SID %), which was system %, database %, timeline %, and is now system %, database %, timeline %; other nodes write here (%)',
			coalesce(me::text, 'unknown'), coalesce(own_sid::text, 'none'), coalesce(own_sys, st_sys), coalesce(own_db, st_db),
			coalesce(own_tl::text, 'unknown'), sys, db, tl, others
			USING ERRCODE = '55U01',
				DETAIL = 'A pg_basebackup clone or a promoted replica keeps the node''s SID and offset: beside the node it copies, it makes the same IDs.',
				HINT = format('If it replaces that node for good (a failover: the old one never writes again), run SELECT %1$I.ulid_flake_adopt_node(). If it is a new node, drop its inherited subscriptions (ALTER SUBSCRIPTION ... DISABLE, SET (slot_name = NONE), DROP) and run SELECT %1$I.ulid_flake_new_node(sid::integer) with a SID no node uses (docs/deployments.md).', schema);
	END IF;
	IF mode = 'new' OR moved THEN
		EXECUTE format('SELECT %I.ulid_flake_build($1)', schema) USING floor(random() * 1048575)::bigint;
		drawn := true;
	END IF;
	IF mode = 'new' OR (moved AND mode <> 'adopt') OR me IS NULL THEN
		-- The old row goes when it is this node's own (a new identity for
		-- an unchanged instance), or the row of the instance a copy was
		-- made from with no other node's beside it (no peer's). A new node
		-- made from a copy in a mesh keeps its source's row: the source's.
		IF me IS NOT NULL AND ((mode = 'new' AND NOT changed) OR (mode <> 'new' AND moved)) THEN
			EXECUTE format('DELETE FROM %I.ulid_flake_nodes WHERE node_id = $1', schema) USING me;
		END IF;
		me := gen_random_uuid();
		EXECUTE format('UPDATE %I.ulid_flake_state SET node_id = $1', schema) USING me;
	END IF;

	IF mode IN ('set', 'new') THEN
		sid := new_sid;
	ELSE
		EXECUTE format('SELECT %I.ulid_flake_node_sid()', schema) INTO sid;
	END IF;
	IF sid IS NOT NULL THEN
		EXECUTE format('SELECT n.node_id, format(%L, n.node_id, n.system_id, n.database_oid, n.timeline, n.written_at)
			FROM %I.ulid_flake_nodes AS n WHERE n.sid = $1 AND n.node_id <> $2 ORDER BY n.node_id LIMIT 1',
			'node %s (system %s, database %s, timeline %s, written %s)', schema) INTO held_by, holder USING sid, me;
		IF holder IS NOT NULL THEN
			RAISE EXCEPTION 'ulid_flake mesh: SID % is %''s: two writable nodes with one SID make the same IDs', sid, holder
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

	IF sid IS NOT NULL OR others IS NOT NULL THEN
		-- Columns whose default, or whose domain's default, is the
		-- stand-alone generator: ulid_flake() or the C extension's
		-- ulid_flake_next(). A wrapper function or a trigger is not seen.
		SELECT string_agg(DISTINCT format('%s.%I', c.oid::regclass, a.attname), ', ') INTO bad
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
				bad, CASE WHEN sid IS NULL THEN 'none, and other nodes write here' ELSE sid::text END
				USING ERRCODE = '55U04',
					HINT = format('On every node: ALTER TABLE ... ALTER COLUMN ... SET DEFAULT %I.ulid_flake_scalable(), and give each node a SID of its own.', schema);
		END IF;
	END IF;

	IF mode IN ('set', 'new') THEN
		EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake_node_sid() RETURNS integer
			LANGUAGE sql STABLE PARALLEL SAFE RETURN %L::integer', schema, sid);
	END IF;
	EXECUTE format('DELETE FROM %I.ulid_flake_nodes WHERE node_id = $1', schema) USING me;
	EXECUTE format('INSERT INTO %I.ulid_flake_nodes (node_id, sid, system_id, database_oid, timeline, written_at)
		VALUES ($1, $2, $3, $4, $5, now())', schema) USING me, sid, sys, db, tl;
	RETURN drawn;
END
$body$::pg_catalog.text);

-- ulid_flake_check_node(): draws a new offset, and returns true, when the
-- state was recorded on another system or database (or is missing:
-- pg_dump -s); refuses what ulid_flake_node_sync refuses; writes this
-- node's row. Migrate runs it at every start.
SELECT ulid_flake_create(pg_catalog.current_schema()::pg_catalog.text, 'ulid_flake_check_node() RETURNS boolean'::pg_catalog.text, $body$
DECLARE
	self   text := 'ulid_flake_check_node()';
	schema text := @schema@;
	drawn boolean;
BEGIN
	@guard@
	EXECUTE format('SELECT %I.ulid_flake_node_sync($1, $2)', @schema@) INTO drawn USING 'check'::text, NULL::integer;
	RETURN drawn;
END
$body$::pg_catalog.text);

-- ulid_flake_set_sid(sid): fixes the SID that ulid_flake_scalable() uses
-- when its call gives none (NULL: none, and such a call is refused, 23514),
-- and writes this node's row. Refused (55U02) when another node's row
-- holds the SID. For the install's owner only.
SELECT ulid_flake_create(pg_catalog.current_schema()::pg_catalog.text, 'ulid_flake_set_sid(sid integer) RETURNS void'::pg_catalog.text, $body$
DECLARE
	schema text := @schema@;
	self   text := 'ulid_flake_set_sid(integer)';
BEGIN
	@guard@
	EXECUTE format('SELECT %I.ulid_flake_node_sync($1, $2)', schema) USING 'set'::text, sid;
END
$body$::pg_catalog.text);

-- ulid_flake_new_node(sid): this database is a new node (a clone turned
-- writer): a new node identity, a new offset, and the SID sid, which no
-- other node's row may hold. The row of the node it was copied from stays.
SELECT ulid_flake_create(pg_catalog.current_schema()::pg_catalog.text, 'ulid_flake_new_node(sid integer) RETURNS void'::pg_catalog.text, $body$
DECLARE
	schema text := @schema@;
	self   text := 'ulid_flake_new_node(integer)';
BEGIN
	@guard@
	EXECUTE format('SELECT %I.ulid_flake_node_sync($1, $2)', schema) USING 'new'::text, sid;
END
$body$::pg_catalog.text);

-- ulid_flake_adopt_node(): this instance replaces the node it recorded (a
-- failover: the old instance never writes again): it keeps the node's
-- identity, SID and offset (a new offset on another system or database),
-- and records the instance.
SELECT ulid_flake_create(pg_catalog.current_schema()::pg_catalog.text, 'ulid_flake_adopt_node() RETURNS void'::pg_catalog.text, $body$
DECLARE
	schema text := @schema@;
	self   text := 'ulid_flake_adopt_node()';
BEGIN
	@guard@
	EXECUTE format('SELECT %I.ulid_flake_node_sync($1, $2)', schema) USING 'adopt'::text, NULL::integer;
END
$body$::pg_catalog.text);

-- ulid_flake_retire_node(node): deletes the row of a node that has left
-- the mesh for good, which frees its SID; the DELETE replicates to the
-- other nodes. A node that still runs writes its row again at its next
-- start. Not this node's own row (22023).
SELECT ulid_flake_create(pg_catalog.current_schema()::pg_catalog.text, 'ulid_flake_retire_node(node uuid) RETURNS void'::pg_catalog.text, $body$
DECLARE
	self   text := 'ulid_flake_retire_node(uuid)';
	schema text := @schema@;
	me     uuid;
	n      bigint;
BEGIN
	@guard@
	EXECUTE format('SELECT s.node_id FROM %I.ulid_flake_state AS s FOR UPDATE', schema) INTO me;
	IF node = me THEN
		RAISE EXCEPTION 'ulid_flake_retire_node: node % is this one', node USING ERRCODE = '22023',
			HINT = 'Run it on another node of the mesh, or give this node a new identity with ulid_flake_new_node(sid).';
	END IF;
	EXECUTE format('DELETE FROM %I.ulid_flake_nodes WHERE node_id = $1', schema) USING node;
	GET DIAGNOSTICS n = ROW_COUNT;
	IF n = 0 THEN
		RAISE EXCEPTION 'ulid_flake_retire_node: no node % in ulid_flake_nodes', node USING ERRCODE = '22023';
	END IF;
END
$body$::pg_catalog.text);

REVOKE EXECUTE ON FUNCTION ulid_flake_build(bigint), ulid_flake_set_epoch(bigint, boolean), ulid_flake_set_sid(integer),
	ulid_flake_epoch_settings(), ulid_flake_node_sync(text, integer), ulid_flake_check_node(), ulid_flake_new_node(integer),
	ulid_flake_adopt_node(), ulid_flake_retire_node(uuid) FROM PUBLIC;

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
