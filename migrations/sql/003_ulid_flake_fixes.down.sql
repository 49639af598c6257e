-- Back to version 2: the functions of version 1 as they were (parallel
-- safe, unqualified settings), and the SID domain's NOT NULL.
DO $install$
DECLARE
	schema text := current_schema();
	seq    text := format('%I.ulid_flake_seq', current_schema());
	-- The offset drawn when 001 was installed, read back from ulid_flake():
	-- a new one would let IDs of the millisecond of the upgrade repeat
	-- those made just before it, and break their order.
	add    bigint := substring((SELECT prosrc FROM pg_proc
		WHERE oid = to_regprocedure(format('%I.ulid_flake()', current_schema()))) FROM '\+ ([0-9]+)\) & 1048575')::bigint;
	ms     text := format('(floor(date_part(%L, clock_timestamp()) * 1000)::bigint - coalesce(nullif(current_setting(%L, true), %L), %L)::bigint)::%I.ulid_flake_timestamp',
		'epoch', 'ulid_flake.epoch_ms', '', '1704067200000', current_schema());
BEGIN
	IF add IS NULL THEN
		RAISE EXCEPTION 'ulid_flake: cannot read the offset of %.ulid_flake(), which is not the one ulidflake installed', to_json(current_schema())
			USING ERRCODE = '55000';
	END IF;
	EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake() RETURNS bigint LANGUAGE sql VOLATILE PARALLEL SAFE AS %L',
		schema, format('SELECT greatest((%s::bigint << 20) | ((nextval(%L::regclass) + %s) & 1048575), 1)', ms, seq, add));
	EXECUTE format('CREATE OR REPLACE FUNCTION %I.ulid_flake_scalable(sid int DEFAULT NULL) RETURNS bigint LANGUAGE sql VOLATILE PARALLEL SAFE AS %L',
		schema, format('SELECT greatest((%s::bigint << 20) | (((nextval(%L::regclass) + %s) & 32767) << 5)
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

