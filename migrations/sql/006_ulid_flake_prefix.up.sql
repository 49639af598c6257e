-- ulidflake 006: the text forms of prefixed IDs (flake.Prefixed in Go),
-- cus_00EZJCRCB4650, for IDs stored as bigint: the prefix belongs to the
-- application's type and is never stored.
--
-- ulid_flake_encode(id, prefix) returns prefix || '_' || ulid_flake_encode(id).
-- ulid_flake_decode(s, prefix) refuses s unless it is prefix, '_' and 13
-- characters that ulid_flake_decode(s) reads (case-insensitive; an
-- underscore among them means another prefix: cus_x_...), with
-- SQLSTATE 22P02, as Go's ParsePrefixed refuses it with ErrPrefix. Both
-- refuse a prefix that is not 1 to 63 lower-case ASCII letters, digits and
-- underscores, starting with a letter and not ending with an underscore
-- (SQLSTATE 22023), as Go does. STRICT: NULL in, NULL out.
--
-- As in 004, the bodies are SQL-standard with qualified operators and
-- functions, created with search_path pinned to the install schema, and
-- their literals are E'' or format()'s %L.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);

-- The install schema is the installer's alone (ulid_flake_alone, version 5).
SELECT ulid_flake_alone(pg_catalog.current_schema());

DO $install$
DECLARE
	schema text := pg_catalog.current_schema();
	-- The prefix's check, raising 22023 when it fails, for a function
	-- returning %5$s. Each text that holds the schema's name goes through
	-- format() once, and only as an argument afterwards: a % in the name
	-- is never read as a directive.
	check_tmpl text := $c$NOT (COALESCE(prefix OPERATOR(pg_catalog.~) %1$L::text, false)
		AND pg_catalog.octet_length(prefix) OPERATOR(pg_catalog.<=) 63) THEN %2$I.ulid_flake_raise(%3$L::text,
		pg_catalog.format(%4$L::text, pg_catalog.to_json(prefix)), NULL::%5$s)$c$;
	re     text := E'^[a-z]([a-z0-9_]*[a-z0-9])?$';
	msg    text := 'ulid_flake: wrong prefix: %s is not 1 to 63 lower-case ASCII letters, digits and underscores, starting with a letter and not ending with an underscore';
	bad_text   text := pg_catalog.format(check_tmpl, re, schema, '22023', msg, 'text');
	bad_bigint text := pg_catalog.format(check_tmpl, re, schema, '22023', msg, 'bigint');
BEGIN
	EXECUTE pg_catalog.format('CREATE FUNCTION %1$I.ulid_flake_encode(id bigint, prefix text) RETURNS text
		LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
		RETURN CASE WHEN %2$s
			ELSE prefix OPERATOR(pg_catalog.||) %3$L::text OPERATOR(pg_catalog.||) %1$I.ulid_flake_encode(id) END',
		schema, bad_text, '_');

	-- The prefix found in s (what precedes its last underscore) names what
	-- was sent in the error.
	EXECUTE pg_catalog.format('CREATE FUNCTION %1$I.ulid_flake_decode(s text, prefix text) RETURNS bigint
		LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
		RETURN CASE WHEN %2$s
			WHEN pg_catalog.starts_with(s, prefix OPERATOR(pg_catalog.||) %3$L::text)
				AND pg_catalog.strpos(pg_catalog.substr(s, pg_catalog.length(prefix) OPERATOR(pg_catalog.+) 2), %3$L::text) OPERATOR(pg_catalog.=) 0
				THEN %1$I.ulid_flake_decode(pg_catalog.substr(s, pg_catalog.length(prefix) OPERATOR(pg_catalog.+) 2))
			WHEN pg_catalog.strpos(pg_catalog.reverse(s), %3$L::text) OPERATOR(pg_catalog.>) 0
				AND pg_catalog.strpos(pg_catalog.reverse(s), %3$L::text) OPERATOR(pg_catalog.<) pg_catalog.length(s)
				THEN %1$I.ulid_flake_raise(%4$L::text, pg_catalog.format(%5$L::text, pg_catalog.to_json(s),
					pg_catalog.to_json(pg_catalog.left(s, pg_catalog.length(s) OPERATOR(pg_catalog.-) pg_catalog.strpos(pg_catalog.reverse(s), %3$L::text))),
					pg_catalog.to_json(prefix)), NULL::bigint)
			ELSE %1$I.ulid_flake_raise(%4$L::text, pg_catalog.format(%6$L::text, pg_catalog.to_json(s),
				pg_catalog.to_json(prefix OPERATOR(pg_catalog.||) %3$L::text)), NULL::bigint) END',
		schema, bad_bigint, '_', '22P02',
		'ulid_flake: wrong prefix: %s has the prefix %s, want %s',
		'ulid_flake: wrong prefix: %s has no prefix, want %s followed by 13 characters');
END
$install$;
