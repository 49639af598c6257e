-- ulidflake 004: bodies that no search_path can redirect, generators that
-- never collide however they are mixed, and generator state that a clone
-- does not share.
--
-- * Every body is SQL-standard (RETURN expr: parsed when it is created and
--   kept as a tree of object ids) with schema-qualified operators and
--   functions, or PL/pgSQL with SET search_path = pg_catalog, pg_temp. No
--   operator or function planted in another schema (public) runs, whatever
--   the caller's search_path and whatever was there before the install.
-- * ulid_flake() and ulid_flake_scalable(sid) share one formula for the
--   15 bits above the SID: x = (nextval mod (2^20 - 1) + offset) mod
--   (2^20 - 1); scalable: (x mod 2^15) << 5 | sid; stand-alone: x rotated
--   left by 5 bits within 20 bits ((x * 32) mod (2^20 - 1)). Two IDs of one
--   millisecond differ whenever fewer than 2^15 nextval() calls happen in
--   it, whichever generators and SIDs are mixed; the stand-alone alone
--   keeps 2^20 - 1 per millisecond. The sequence's MAXVALUE is a multiple
--   of 2^20 - 1, so x runs on through the sequence's CYCLE.
-- * The offset lives in ulid_flake_state with the node it was drawn on
--   (system identifier and database OID); ulid_flake_check_node(), which
--   Migrate runs every time, draws a new one on a clone (pg_dump, CREATE
--   DATABASE ... TEMPLATE), not on a promoted physical replica. No value is
--   read back out of a function's source.
--
-- Every statement runs with search_path pinned to the install schema alone
-- (pg_catalog is then searched first), and every call in the DO blocks is
-- qualified, so that nothing planted in public runs during the install.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

CREATE TABLE ulid_flake_state (
	singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	"offset"      bigint NOT NULL,
	system_id     bigint NOT NULL,
	database_oid  oid NOT NULL,
	drawn_at      timestamp with time zone NOT NULL
);

-- The range checks, qualified (the constraints of versions 1 and 3 compared
-- with unqualified operators). The regular expressions are E'' literals:
-- they mean the same whatever standard_conforming_strings says.
ALTER DOMAIN ulid_flake_timestamp DROP CONSTRAINT "ulid_flake: clock outside the epoch range (ulid_flake.epoch_ms)";
ALTER DOMAIN ulid_flake_timestamp ADD CONSTRAINT "ulid_flake: clock outside the epoch range (ulid_flake.epoch_ms)"
	CHECK (VALUE OPERATOR(pg_catalog.>=) 0::bigint AND VALUE OPERATOR(pg_catalog.<=) 8796093022207::bigint);
ALTER DOMAIN ulid_flake_sid DROP CONSTRAINT "ulid_flake: SID not in 0..31";
ALTER DOMAIN ulid_flake_sid ADD CONSTRAINT "ulid_flake: SID not in 0..31"
	CHECK (VALUE OPERATOR(pg_catalog.>=) 0 AND VALUE OPERATOR(pg_catalog.<=) 31);
ALTER DOMAIN ulid_flake_epoch_setting DROP CONSTRAINT "ulid_flake.epoch_ms must be an integer (Unix milliseconds)";
ALTER DOMAIN ulid_flake_epoch_setting ADD CONSTRAINT "ulid_flake.epoch_ms must be an integer (Unix milliseconds)"
	CHECK (VALUE OPERATOR(pg_catalog.~) E'^\\s*[+-]?[0-9]{1,18}\\s*$'::text);
ALTER DOMAIN ulid_flake_sid_setting DROP CONSTRAINT "ulid_flake.sid must be an integer in 0..31";
ALTER DOMAIN ulid_flake_sid_setting ADD CONSTRAINT "ulid_flake.sid must be an integer in 0..31"
	CHECK (VALUE OPERATOR(pg_catalog.~) E'^\\s*[+]?[0-9]{1,9}\\s*$'::text);

ALTER SEQUENCE ulid_flake_seq MAXVALUE 9223372036854775800;

-- ulid_flake_raise(sqlstate, message, result): raises; lets SQL bodies
-- report errors. VOLATILE so that the planner never runs it ahead of time.
CREATE FUNCTION ulid_flake_raise(code text, message text, result anyelement) RETURNS anyelement
LANGUAGE plpgsql VOLATILE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message;
END
$$;

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

	-- ulid_flake_encode(id): 13 Crockford Base32 characters, one expression.
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_encode(id bigint) RETURNS text
		LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
		RETURN CASE WHEN id OPERATOR(pg_catalog.<) 0::bigint
			THEN %I.ulid_flake_raise(%L::text, pg_catalog.format(%L, id), NULL::text)
			ELSE %s END',
		schema, schema, '22003', 'ulid_flake: integer out of range: %s is negative',
		(SELECT pg_catalog.string_agg(pg_catalog.format(
			'pg_catalog.substr(%L::text, ((id OPERATOR(pg_catalog.>>) %s) OPERATOR(pg_catalog.&) 31::bigint)::integer OPERATOR(pg_catalog.+) 1, 1)',
			'0123456789ABCDEFGHJKMNPQRSTVWXYZ', 5 OPERATOR(pg_catalog.*) i), ' OPERATOR(pg_catalog.||) ' ORDER BY i DESC)
		FROM pg_catalog.generate_series(0, 12) AS i));

	-- ulid_flake_build(offset): (re)creates the generators with offset and
	-- records it with the node it is drawn on.
	EXECUTE pg_catalog.format($f$CREATE FUNCTION %1$I.ulid_flake_build(new_offset bigint) RETURNS void
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
	EXECUTE pg_catalog.format($f$CREATE FUNCTION %1$I.ulid_flake_check_node() RETURNS boolean
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
	EXECUTE pg_catalog.format('REVOKE EXECUTE ON FUNCTION %1$I.ulid_flake_build(bigint), %1$I.ulid_flake_check_node() FROM PUBLIC', schema);
END
$install$;

-- The new offset, chosen so that IDs of the old functions (still made by
-- statements that started before this commits) and of the new ones differ:
-- every ID made by version 3's functions within 4096 sequence values of the
-- upgrade, and every ID made by these within the 4096 values after it,
-- differ in the 15 bits above the SID. Version 3's offset is found by
-- calling its ulid_flake() with only pg_catalog on the search_path (its
-- body is parsed at each call), never by reading its source.
DO $offset$
DECLARE
	schema text := pg_catalog.current_schema();
	path   text := pg_catalog.current_setting('search_path');
	id     bigint;
	s      bigint;
	a      bigint;
	arcs   bigint[];
	t      bigint;
	ok     boolean;
BEGIN
	PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
	EXECUTE pg_catalog.format('SELECT %I.ulid_flake()', schema) INTO id;
	EXECUTE pg_catalog.format('SELECT pg_catalog.currval(%L::regclass)', pg_catalog.format('%I.ulid_flake_seq', schema)) INTO s;
	PERFORM pg_catalog.set_config('search_path', path, true);
	a := ((id OPERATOR(pg_catalog.&) 1048575::bigint) OPERATOR(pg_catalog.-) (s OPERATOR(pg_catalog.&) 1048575::bigint)) OPERATOR(pg_catalog.&) 1048575::bigint;
	-- Arcs of 15-bit values, as (start, length): version 3's stand-alone and
	-- scalable values for the sequence values s - 4096 .. s + 4095.
	arcs := ARRAY[
		((((s OPERATOR(pg_catalog.-) 4096::bigint) OPERATOR(pg_catalog.&) 1048575::bigint) OPERATOR(pg_catalog.+) a) OPERATOR(pg_catalog.&) 1048575::bigint) OPERATOR(pg_catalog.>>) 5, 258::bigint,
		((s OPERATOR(pg_catalog.-) 4096::bigint) OPERATOR(pg_catalog.+) a) OPERATOR(pg_catalog.&) 32767::bigint, 8192::bigint];
	FOR i IN 0..1 LOOP
		-- Start the new values' arc (4097 long) just after one of the old ones.
		t := (arcs[2 OPERATOR(pg_catalog.*) i OPERATOR(pg_catalog.+) 1] OPERATOR(pg_catalog.+) arcs[2 OPERATOR(pg_catalog.*) i OPERATOR(pg_catalog.+) 2]) OPERATOR(pg_catalog.&) 32767::bigint;
		ok := true;
		FOR j IN 0..1 LOOP
			ok := ok AND ((arcs[2 OPERATOR(pg_catalog.*) j OPERATOR(pg_catalog.+) 1] OPERATOR(pg_catalog.-) t) OPERATOR(pg_catalog.&) 32767::bigint) OPERATOR(pg_catalog.>=) 4097::bigint
				AND ((t OPERATOR(pg_catalog.-) arcs[2 OPERATOR(pg_catalog.*) j OPERATOR(pg_catalog.+) 1]) OPERATOR(pg_catalog.&) 32767::bigint) OPERATOR(pg_catalog.>=) arcs[2 OPERATOR(pg_catalog.*) j OPERATOR(pg_catalog.+) 2];
		END LOOP;
		EXIT WHEN ok;
	END LOOP;
	IF NOT ok THEN
		RAISE EXCEPTION 'ulid_flake: no offset keeps the IDs of the upgrade apart (sequence %, offset %)', s, a USING ERRCODE = 'XX000';
	END IF;
	-- x at the next sequence value (s + 1) is t + 1: x = (s mod P + offset) mod P.
	EXECUTE pg_catalog.format('SELECT %I.ulid_flake_build($1)', schema)
		USING ((t OPERATOR(pg_catalog.-) (s OPERATOR(pg_catalog.%) 1048575::bigint)) OPERATOR(pg_catalog.%) 1048575::bigint OPERATOR(pg_catalog.+) 1048575::bigint) OPERATOR(pg_catalog.%) 1048575::bigint;
END
$offset$;

-- ulid_flake_decode(text) stays PL/pgSQL; its statements are planned with
-- pg_catalog first.
ALTER FUNCTION ulid_flake_decode(text) SET search_path = pg_catalog, pg_temp;
