-- ulidflake 010 down: ulid_flake_min and ulid_flake_max as version 7 made
-- them, then drops ulid_flake_out_of_range, which they no longer call.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- The install schema is the installer's alone (ulid_flake_alone, version 5).
SELECT ulid_flake_alone(pg_catalog.current_schema());

DO $install$
DECLARE
	schema text := pg_catalog.current_schema();
	epoch  text := pg_catalog.format('%I.ulid_flake_epoch_ms()', pg_catalog.current_schema());
	tms    text;
	bound  text;
BEGIN
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
END
$install$;

DROP FUNCTION ulid_flake_out_of_range(timestamp with time zone, bigint);
