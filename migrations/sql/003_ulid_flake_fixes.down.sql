SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);
-- Back to version 2: the functions of version 1 as they were (parallel
-- safe, unqualified settings), and the SID domain's NOT NULL.
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
	ms     text := pg_catalog.format('(floor(date_part(%L, clock_timestamp()) * 1000)::bigint - coalesce(nullif(current_setting(%L, true), %L), %L)::bigint)::%I.ulid_flake_timestamp',
		'epoch', 'ulid_flake.epoch_ms', '', '1704067200000', pg_catalog.current_schema());
BEGIN
	-- Its body is parsed at each call: with pg_catalog alone on the path,
	-- nothing planted elsewhere runs.
	PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
	EXECUTE pg_catalog.format('SELECT %I.ulid_flake()', schema) INTO id;
	EXECUTE pg_catalog.format('SELECT pg_catalog.currval(%L::regclass)', seq) INTO s;
	PERFORM pg_catalog.set_config('search_path', path, true);
	add := ((id OPERATOR(pg_catalog.&) 1048575::bigint) OPERATOR(pg_catalog.-) (s OPERATOR(pg_catalog.&) 1048575::bigint)) OPERATOR(pg_catalog.&) 1048575::bigint;
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake() RETURNS bigint LANGUAGE sql VOLATILE PARALLEL SAFE AS %L',
		schema, pg_catalog.format('SELECT greatest((%s::bigint << 20) | ((nextval(%L::regclass) + %s) & 1048575), 1)', ms, seq, add));
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_scalable(sid int DEFAULT NULL) RETURNS bigint LANGUAGE sql VOLATILE PARALLEL SAFE AS %L',
		schema, pg_catalog.format('SELECT greatest((%s::bigint << 20) | (((nextval(%L::regclass) + %s) & 32767) << 5)
				| coalesce(sid, nullif(current_setting(%L, true), %L)::int)::%I.ulid_flake_sid, 1)',
			ms, seq, add, 'ulid_flake.sid', '', schema));
END
$install$;
CREATE OR REPLACE FUNCTION ulid_flake_time(id bigint) RETURNS timestamptz
LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
	SELECT timestamptz 'epoch' + (coalesce(nullif(current_setting('ulid_flake.epoch_ms', true), ''), '1704067200000')::bigint
		+ ((id >> 20) & 8796093022207)) * interval '1 millisecond'
$$;
CREATE OR REPLACE FUNCTION ulid_flake_min(t timestamptz) RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS $$
DECLARE
	ms bigint := floor(extract(epoch FROM t) * 1000)::bigint
		- coalesce(nullif(current_setting('ulid_flake.epoch_ms', true), ''), '1704067200000')::bigint;
BEGIN
	IF ms NOT BETWEEN 0 AND 8796093022207 THEN
		RAISE EXCEPTION 'ulid_flake: time out of range: % is % ms from the epoch, not between 0 and 8796093022207', t, ms
			USING ERRCODE = '22003';
	END IF;
	RETURN ms << 20;
END
$$;
CREATE OR REPLACE FUNCTION ulid_flake_max(t timestamptz) RETURNS bigint
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS $$
DECLARE
	ms bigint := floor(extract(epoch FROM t) * 1000)::bigint
		- coalesce(nullif(current_setting('ulid_flake.epoch_ms', true), ''), '1704067200000')::bigint;
BEGIN
	IF ms NOT BETWEEN 0 AND 8796093022207 THEN
		RAISE EXCEPTION 'ulid_flake: time out of range: % is % ms from the epoch, not between 0 and 8796093022207', t, ms
			USING ERRCODE = '22003';
	END IF;
	RETURN (ms << 20) | 1048575;
END
$$;
ALTER DOMAIN ulid_flake_sid DROP CONSTRAINT "no SID: give ulid_flake_scalable(sid) or SET ulid_flake.sid";
ALTER DOMAIN ulid_flake_sid SET NOT NULL;
DROP DOMAIN ulid_flake_sid_setting;
DROP DOMAIN ulid_flake_epoch_setting;

-- ulid_flake_decode(text): as strict as the Go parser: exactly 13 bytes,
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

