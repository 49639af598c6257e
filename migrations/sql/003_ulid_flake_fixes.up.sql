SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);
-- ulidflake 003: the generators made safe under parallel plans, without
-- bigint overflow, with errors that name the setting at fault.
--
-- * ulid_flake() and ulid_flake_scalable() call nextval(), which PostgreSQL
--   cannot run in a parallel worker: they are PARALLEL UNSAFE, so a query
--   that calls them (CREATE TABLE ... AS SELECT ulid_flake() ... included)
--   gets a serial plan instead of failing.
-- * The sequence value is masked before the install-time offset is added,
--   so nextval() + offset never overflows bigint, whatever the sequence's
--   position before it cycles.
-- * An invalid ulid_flake.epoch_ms or ulid_flake.sid setting, a missing
--   SID, and a time outside the epoch's range (infinity included) raise
--   errors that name the setting or the range (SQLSTATE 23514 for the
--   settings and the SID, 22003 for times).
--
-- Every name reaches SQL through format() with %I or %L: no schema name can
-- end a literal or a body.

-- The settings, checked before they are cast, so that a bad value is
-- reported by the name of the setting.
CREATE DOMAIN ulid_flake_epoch_setting AS text
	CONSTRAINT "ulid_flake.epoch_ms must be an integer (Unix milliseconds)"
	CHECK (VALUE ~ E'^\\s*[+-]?[0-9]{1,18}\\s*$');
CREATE DOMAIN ulid_flake_sid_setting AS text
	CONSTRAINT "ulid_flake.sid must be an integer in 0..31"
	CHECK (VALUE ~ E'^\\s*[+]?[0-9]{1,9}\\s*$');
-- A NOT NULL domain constraint reports only the domain's name; a CHECK
-- reports its own, which says what to do.
ALTER DOMAIN ulid_flake_sid DROP NOT NULL;
ALTER DOMAIN ulid_flake_sid DROP CONSTRAINT IF EXISTS "ulid_flake: SID not set (argument or ulid_flake.sid)";
ALTER DOMAIN ulid_flake_sid ADD
	CONSTRAINT "no SID: give ulid_flake_scalable(sid) or SET ulid_flake.sid"
	CHECK (VALUE IS NOT NULL);

DO $install$
DECLARE
	schema text := pg_catalog.current_schema();
	seq    text := pg_catalog.format('%I.ulid_flake_seq', pg_catalog.current_schema());
	-- The offset drawn when 001 was installed, found by calling ulid_flake()
	-- (never read out of its source): a new one would let IDs of the
	-- millisecond of the upgrade repeat those made just before it, and
	-- break their order.
	add    bigint;
	path   text := pg_catalog.current_setting('search_path');
	id     bigint;
	s      bigint;
	-- The setting is checked only when it is set: a regular-expression
	-- match on every row would cost more than the rest of the default.
	epoch  text := pg_catalog.format('coalesce(nullif(current_setting(%L, true), %L)::%I.ulid_flake_epoch_setting::bigint, 1704067200000)',
		'ulid_flake.epoch_ms', '', pg_catalog.current_schema());
	ms     text := pg_catalog.format('(floor(date_part(%L, clock_timestamp()) * 1000)::bigint - %s)::%I.ulid_flake_timestamp',
		'epoch', epoch, pg_catalog.current_schema());
BEGIN
	-- Its body is parsed at each call: with pg_catalog alone on the path,
	-- nothing planted elsewhere runs.
	PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
	EXECUTE pg_catalog.format('SELECT %I.ulid_flake()', schema) INTO id;
	EXECUTE pg_catalog.format('SELECT pg_catalog.currval(%L::regclass)', seq) INTO s;
	PERFORM pg_catalog.set_config('search_path', path, true);
	add := ((id OPERATOR(pg_catalog.&) 1048575::bigint) OPERATOR(pg_catalog.-) (s OPERATOR(pg_catalog.&) 1048575::bigint)) OPERATOR(pg_catalog.&) 1048575::bigint;
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake() RETURNS bigint LANGUAGE sql VOLATILE PARALLEL UNSAFE AS %L',
		schema, pg_catalog.format('SELECT greatest((%s::bigint << 20) | (((nextval(%L::regclass) & 1048575) + %s) & 1048575), 1)',
			ms, seq, add));

	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_scalable(sid int DEFAULT NULL) RETURNS bigint LANGUAGE sql VOLATILE PARALLEL UNSAFE AS %L',
		schema, pg_catalog.format('SELECT greatest((%s::bigint << 20) | ((((nextval(%L::regclass) & 32767) + %s) & 32767) << 5)
				| coalesce(sid, nullif(current_setting(%L, true), %L)::%I.ulid_flake_sid_setting::int)::%I.ulid_flake_sid, 1)',
			ms, seq, add, 'ulid_flake.sid', '', schema, schema));

	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_time(id bigint) RETURNS timestamptz LANGUAGE sql STABLE STRICT PARALLEL SAFE AS %L',
		schema, pg_catalog.format('SELECT timestamptz %L + (%s + ((id >> 20) & 8796093022207)) * interval %L',
			'epoch', epoch, '1 millisecond'));

	-- min and max: the smallest and the largest ID of t's millisecond.
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_min(t timestamptz) RETURNS bigint LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS %L',
		schema, pg_catalog.format($body$
DECLARE
	ms bigint;
BEGIN
	IF NOT isfinite(t) THEN
		RAISE EXCEPTION 'ulid_flake: time out of range: %% is not a finite time', t USING ERRCODE = '22003';
	END IF;
	ms := floor(extract(epoch FROM t) * 1000)::bigint - %s;
	IF ms NOT BETWEEN 0 AND 8796093022207 THEN
		RAISE EXCEPTION 'ulid_flake: time out of range: %% is %% ms from the epoch, not between 0 and 8796093022207', t, ms
			USING ERRCODE = '22003';
	END IF;
	RETURN ms << 20 | %s;
END$body$, epoch, 0));
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_max(t timestamptz) RETURNS bigint LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS %L',
		schema, pg_catalog.format($body$
DECLARE
	ms bigint;
BEGIN
	IF NOT isfinite(t) THEN
		RAISE EXCEPTION 'ulid_flake: time out of range: %% is not a finite time', t USING ERRCODE = '22003';
	END IF;
	ms := floor(extract(epoch FROM t) * 1000)::bigint - %s;
	IF ms NOT BETWEEN 0 AND 8796093022207 THEN
		RAISE EXCEPTION 'ulid_flake: time out of range: %% is %% ms from the epoch, not between 0 and 8796093022207', t, ms
			USING ERRCODE = '22003';
	END IF;
	RETURN ms << 20 | %s;
END$body$, epoch, 1048575));
END
$install$;

-- ulid_flake_decode(text), as in version 1 but for the message of the empty
-- string, which says so, as Go does. As strict as the Go parser: exactly 13 bytes,
-- case-insensitive, ASCII Crockford Base32 only (I L O U are not aliased),
-- nothing above 7ZZZZZZZZZZZZ. Errors are SQLSTATE 22P02 and name the input.
CREATE OR REPLACE FUNCTION ulid_flake_decode(s text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	v bigint := 0;
	d int;
	c text;
	first int;
BEGIN
	IF s = '' THEN
		RAISE EXCEPTION 'ulid_flake: wrong length: the ID is empty (""), want 13 characters' USING ERRCODE = '22P02';
	END IF;
	IF octet_length(s) <> 13 THEN
		RAISE EXCEPTION 'ulid_flake: wrong length: % is % bytes, want 13', to_json(s), octet_length(s)
			USING ERRCODE = '22P02';
	END IF;
	FOR i IN 1..length(s) LOOP
		c := substr(s, i, 1);
		d := CASE WHEN octet_length(c) = 1 THEN strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', upper(c)) - 1 ELSE -1 END;
		IF d < 0 THEN
			RAISE EXCEPTION 'ulid_flake: invalid character: % has % at byte %, not Crockford Base32 (0-9, A-Z without I, L, O, U)',
				to_json(s), to_json(c), octet_length(substr(s, 1, i - 1)) USING ERRCODE = '22P02';
		END IF;
		IF i = 1 THEN
			first := d;
		END IF;
		v := (v << 5) | d;
	END LOOP;
	IF first > 7 THEN
		RAISE EXCEPTION 'ulid_flake: value above 7ZZZZZZZZZZZZ: %', to_json(s) USING ERRCODE = '22P02';
	END IF;
	RETURN v;
END
$$;

