-- ulidflake 010: a time outside the epoch's range names the fix.
--
-- ulid_flake_min, ulid_flake_max (and so ulid_flake_at, which calls
-- ulid_flake_min) raised "time out of range: ... ms from the epoch" from
-- inside ulid_flake_raise, saying nothing of what to do. They now call
-- ulid_flake_out_of_range(t, epoch_ms), which raises 22003 as before with
-- the message Go gives (the time and the epoch, RFC 3339 in UTC with
-- milliseconds) and a HINT naming the fix: an earlier (or later) epoch,
-- chosen before the first ID (ulid_flake_set_epoch, migrations.WithEpoch).
-- Its body names no schema; the epoch comes as an argument from the
-- callers' SQL-standard bodies, which call ulid_flake_epoch_ms() by object
-- id, so ulid_flake_set_epoch reaches them as before.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- The install schema is the installer's alone (ulid_flake_alone, version 5).
SELECT ulid_flake_alone(pg_catalog.current_schema());

-- ulid_flake_out_of_range(t, epoch_ms): raises the error of a time t
-- outside the range of the epoch epoch_ms (Unix ms). VOLATILE so that the
-- planner never runs it ahead of time.
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

DO $install$
DECLARE
	schema text := pg_catalog.current_schema();
	epoch  text := pg_catalog.format('%I.ulid_flake_epoch_ms()', pg_catalog.current_schema());
	tms    text;
	bound  text;
BEGIN
	-- ulid_flake_min and ulid_flake_max, as in 007, with the error of a
	-- time out of range from ulid_flake_out_of_range.
	tms := pg_catalog.format('(pg_catalog.floor(EXTRACT(epoch FROM t) OPERATOR(pg_catalog.*) 1000::numeric)::bigint OPERATOR(pg_catalog.-) %s)', epoch);
	bound := $b$RETURN CASE
		WHEN NOT pg_catalog.isfinite(t) OR %2$s OPERATOR(pg_catalog.<) 0::bigint OR %2$s OPERATOR(pg_catalog.>) 8796093022207::bigint
			THEN %1$I.ulid_flake_out_of_range(t, %4$s)
		ELSE (%2$s OPERATOR(pg_catalog.<<) 20) OPERATOR(pg_catalog.|) %3$s::bigint
	END$b$;
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_min(t timestamp with time zone) RETURNS bigint
		LANGUAGE sql STABLE STRICT PARALLEL SAFE ', schema) OPERATOR(pg_catalog.||) pg_catalog.format(bound, schema, tms, 0, epoch);
	EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION %I.ulid_flake_max(t timestamp with time zone) RETURNS bigint
		LANGUAGE sql STABLE STRICT PARALLEL SAFE ', schema) OPERATOR(pg_catalog.||) pg_catalog.format(bound, schema, tms, 1048575, epoch);
END
$install$;
