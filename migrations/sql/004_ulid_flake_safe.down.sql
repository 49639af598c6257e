SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);
-- Back to version 3: its functions, with the offset version 4 used, and its
-- domain constraints.
ALTER FUNCTION ulid_flake_decode(text) RESET search_path;
DO $install$
DECLARE
	schema text := pg_catalog.current_schema();
	seq    text := pg_catalog.format('%I.ulid_flake_seq', pg_catalog.current_schema());
	-- The offset version 4 recorded, as version 3's.
	add    bigint := (SELECT "offset" FROM ulid_flake_state);
	-- The setting is checked only when it is set: a regular-expression
	-- match on every row would cost more than the rest of the default.
	epoch  text := pg_catalog.format('coalesce(nullif(current_setting(%L, true), %L)::%I.ulid_flake_epoch_setting::bigint, 1704067200000)',
		'ulid_flake.epoch_ms', '', pg_catalog.current_schema());
	ms     text := pg_catalog.format('(floor(date_part(%L, clock_timestamp()) * 1000)::bigint - %s)::%I.ulid_flake_timestamp',
		'epoch', epoch, pg_catalog.current_schema());
BEGIN
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

CREATE OR REPLACE FUNCTION ulid_flake_encode(id bigint) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
	out text := '';
BEGIN
	IF id < 0 THEN
		RAISE EXCEPTION 'ulid_flake: integer out of range: % is negative', id USING ERRCODE = '22003';
	END IF;
	FOR i IN REVERSE 12..0 LOOP
		out := out || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((id >> (5 * i)) & 31)::int + 1, 1);
	END LOOP;
	RETURN out;
END
$$;

DROP FUNCTION ulid_flake_check_node();
DROP FUNCTION ulid_flake_build(bigint);
DROP FUNCTION ulid_flake_raise(text, text, anyelement);
DROP TABLE ulid_flake_state;
ALTER SEQUENCE ulid_flake_seq NO MAXVALUE;
ALTER DOMAIN ulid_flake_timestamp DROP CONSTRAINT "ulid_flake: clock outside the epoch range (ulid_flake.epoch_ms)";
ALTER DOMAIN ulid_flake_timestamp ADD CONSTRAINT "ulid_flake: clock outside the epoch range (ulid_flake.epoch_ms)"
	CHECK (VALUE BETWEEN 0 AND 8796093022207);
ALTER DOMAIN ulid_flake_sid DROP CONSTRAINT "ulid_flake: SID not in 0..31";
ALTER DOMAIN ulid_flake_sid ADD CONSTRAINT "ulid_flake: SID not in 0..31" CHECK (VALUE BETWEEN 0 AND 31);
ALTER DOMAIN ulid_flake_epoch_setting DROP CONSTRAINT "ulid_flake.epoch_ms must be an integer (Unix milliseconds)";
ALTER DOMAIN ulid_flake_epoch_setting ADD CONSTRAINT "ulid_flake.epoch_ms must be an integer (Unix milliseconds)"
	CHECK (VALUE ~ E'^\\s*[+-]?[0-9]{1,18}\\s*$');
ALTER DOMAIN ulid_flake_sid_setting DROP CONSTRAINT "ulid_flake.sid must be an integer in 0..31";
ALTER DOMAIN ulid_flake_sid_setting ADD CONSTRAINT "ulid_flake.sid must be an integer in 0..31"
	CHECK (VALUE ~ E'^\\s*[+]?[0-9]{1,9}\\s*$');
