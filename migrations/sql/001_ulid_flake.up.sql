-- ulidflake 001: Ulid-Flake IDs generated inside PostgreSQL, bit-compatible
-- with the Go package github.com/ulidflake/ulidflake/flake.
--
-- Plain SQL and PL/pgSQL: no extension, no superuser. Everything is created
-- in the first schema of search_path (current_schema()); the generator
-- functions refer to their sequence by that schema, so they keep working
-- whatever the caller's search_path.
--
-- Settings (ALTER DATABASE ... SET, ALTER ROLE ... SET, or SET):
--   ulid_flake.epoch_ms   the epoch in Unix ms (default 1704067200000, 2024-01-01)
--   ulid_flake.sid        the SID (0..31) of ulid_flake_scalable() when no argument is given

-- The rest of this file runs with search_path pinned to the install schema
-- alone: pg_catalog is searched first, and nothing planted elsewhere can
-- stand in for what the install calls.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- Uniqueness across sessions: the low bits of every ID come from this
-- sequence plus an offset drawn at install time, modulo 2^20 (scalable:
-- 2^15). Two IDs of the same millisecond therefore differ as long as fewer
-- than 2^20 (scalable: 2^15) are made in it, and within a millisecond they
-- increase, so that inserts append to the primary-key index as with a
-- sequence. (A scrambled order was measured: it halves the insert rate and
-- leaves the index a third emptier; see BENCHMARKS.md.)
CREATE SEQUENCE ulid_flake_seq AS bigint CYCLE;
-- Any role that inserts rows with DEFAULT ulid_flake() must be able to
-- advance it; advancing it from outside does no harm.
GRANT USAGE ON SEQUENCE ulid_flake_seq TO PUBLIC;

-- Range checks as domains, so that the generators stay single expressions
-- that PostgreSQL inlines into the INSERT (a function call costs more than
-- the rest of the work).
CREATE DOMAIN ulid_flake_timestamp AS bigint
	CONSTRAINT "ulid_flake: clock outside the epoch range (ulid_flake.epoch_ms)"
	CHECK (VALUE BETWEEN 0 AND 8796093022207);
CREATE DOMAIN ulid_flake_sid AS int
	CONSTRAINT "ulid_flake: SID not set (argument or ulid_flake.sid)" NOT NULL
	CONSTRAINT "ulid_flake: SID not in 0..31" CHECK (VALUE BETWEEN 0 AND 31);

DO $install$
DECLARE
	schema text := pg_catalog.current_schema();
	seq    text := pg_catalog.format('%I.ulid_flake_seq', pg_catalog.current_schema());
	add    bigint := pg_catalog.floor(pg_catalog.random() OPERATOR(pg_catalog.*) 1048576::double precision)::bigint;
	ms     text := pg_catalog.format($ms$(floor(date_part('epoch', clock_timestamp()) * 1000)::bigint
		- coalesce(nullif(current_setting('ulid_flake.epoch_ms', true), ''), '1704067200000')::bigint)::%I.ulid_flake_timestamp$ms$,
		pg_catalog.current_schema());
BEGIN
	-- The bodies are passed as quoted literals (%L), never dollar-quoted
	-- around a schema name, so that no name can end them.
	-- ulid_flake(): a stand-alone ID, for DEFAULT ulid_flake().
	EXECUTE pg_catalog.format('CREATE FUNCTION %I.ulid_flake() RETURNS bigint LANGUAGE sql VOLATILE PARALLEL SAFE AS %L',
		schema, pg_catalog.format('SELECT greatest((%s::bigint << 20) | ((nextval(%L::regclass) + %s) & 1048575), 1)', ms, seq, add));

	-- ulid_flake_scalable(sid): the scalable layout, 15 sequence bits then
	-- the SID; the SID comes from the argument or, when it is
	-- NULL, from the setting ulid_flake.sid.
	EXECUTE pg_catalog.format('CREATE FUNCTION %I.ulid_flake_scalable(sid int DEFAULT NULL) RETURNS bigint LANGUAGE sql VOLATILE PARALLEL SAFE AS %L',
		schema, pg_catalog.format('SELECT greatest((%s::bigint << 20) | (((nextval(%L::regclass) + %s) & 32767) << 5)
				| coalesce(sid, nullif(current_setting(%L, true), %L)::int)::%I.ulid_flake_sid, 1)',
			ms, seq, add, 'ulid_flake.sid', '', schema));
END
$install$;

-- ulid_flake_encode(id): the 13-character Crockford Base32 text form.
CREATE FUNCTION ulid_flake_encode(id bigint) RETURNS text
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

-- ulid_flake_decode(text): as strict as the Go parser: exactly 13 bytes,
-- case-insensitive, ASCII Crockford Base32 only (I L O U are not aliased),
-- nothing above 7ZZZZZZZZZZZZ. Errors are SQLSTATE 22P02 and name the input.
CREATE FUNCTION ulid_flake_decode(s text) RETURNS bigint
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

-- ulid_flake_time(id): the time an ID carries, under ulid_flake.epoch_ms.
CREATE FUNCTION ulid_flake_time(id bigint) RETURNS timestamptz
LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
	SELECT timestamptz 'epoch' + (coalesce(nullif(current_setting('ulid_flake.epoch_ms', true), ''), '1704067200000')::bigint
		+ ((id >> 20) & 8796093022207)) * interval '1 millisecond'
$$;

-- ulid_flake_min(t) and ulid_flake_max(t): the smallest and the largest ID
-- that carry t's millisecond, for time ranges on the primary key:
--   WHERE id >= ulid_flake_min($from) AND id < ulid_flake_min($to)
CREATE FUNCTION ulid_flake_min(t timestamptz) RETURNS bigint
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

CREATE FUNCTION ulid_flake_max(t timestamptz) RETURNS bigint
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
