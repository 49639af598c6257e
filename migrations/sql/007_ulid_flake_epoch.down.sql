-- Back to version 6: the epoch read from the setting ulid_flake.epoch_ms
-- at every call, as 004 made it, else 2024-01-01. Refused unless every
-- setting the catalog shows (ulid_flake_epoch_settings) gives sessions
-- that start from now on the epoch version 7 has.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- The install schema is the installer's alone (ulid_flake_alone, version 5).
SELECT ulid_flake_alone(pg_catalog.current_schema());

DO $check$
DECLARE
	installed bigint;
	clash     text;
BEGIN
	-- The state's row lock orders this with ulid_flake_set_epoch().
	SELECT ulid_flake_epoch_ms() INTO installed FROM ulid_flake_state FOR UPDATE;
	installed := ulid_flake_epoch_ms();
	SELECT pg_catalog.string_agg(e.who, '; ') INTO clash FROM ulid_flake_epoch_settings() AS e
		WHERE e.epoch_ms IS NULL OR e.epoch_ms OPERATOR(pg_catalog.<>) installed;
	IF clash IS NOT NULL THEN
		RAISE EXCEPTION 'ulid_flake: the epoch is % Unix ms, and version 6 reads the epoch from the setting ulid_flake.epoch_ms at every call, which would give sessions another (%): %', installed, clash,
			pg_catalog.format('ALTER DATABASE %I SET ulid_flake.epoch_ms = %s (and make the others say it, or RESET them), then migrate down', pg_catalog.current_database(), installed)
			USING ERRCODE = '55000';
	END IF;
END
$check$;

ALTER TABLE ulid_flake_state DROP COLUMN epoch_ms;
DROP FUNCTION ulid_flake_set_epoch(bigint, boolean);
ALTER DOMAIN ulid_flake_timestamp RENAME CONSTRAINT "ulid_flake: clock outside the epoch range (ulid_flake_epoch_ms)"
	TO "ulid_flake: clock outside the epoch range (ulid_flake.epoch_ms)";

DO $install$
DECLARE
	schema text := pg_catalog.current_schema();
	epoch  text := pg_catalog.format('COALESCE(NULLIF(pg_catalog.current_setting(%L::text, true), %L::text)::%I.ulid_flake_epoch_setting::bigint, 1704067200000::bigint)',
		'ulid_flake.epoch_ms', '', pg_catalog.current_schema());
	tms    text;
	bound  text;
BEGIN
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

	-- ulid_flake_build(offset) exactly as 004 made it.
	EXECUTE pg_catalog.format($f$CREATE OR REPLACE FUNCTION %1$I.ulid_flake_build(new_offset bigint) RETURNS void
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

	-- The generators again, with the recorded offset.
	EXECUTE pg_catalog.format('SELECT %1$I.ulid_flake_build(s."offset") FROM %1$I.ulid_flake_state AS s', schema);
END
$install$;

DROP FUNCTION ulid_flake_epoch_ms();
DROP FUNCTION ulid_flake_epoch_settings();
