-- ulid_flake_ext 1.0: ulid_flake_next(seq), in the schema of ulidflake's
-- migrations (version 4 or later):
--
--   CREATE EXTENSION ulid_flake_ext SCHEMA <the schema of ulid_flake()>;
--   ALTER TABLE t ALTER COLUMN id SET DEFAULT ulid_flake_next(nextval('ulid_flake_seq'));
\echo Use "CREATE EXTENSION ulid_flake_ext" to load this file. \quit

-- STABLE, not VOLATILE, although it reads the clock: COPY FROM then keeps
-- inserting in batches for a default ulid_flake_next(nextval(...)), since
-- COPY looks for volatile functions other than nextval(). Everywhere else
-- the planner sees nextval(), which is volatile, in the argument, and
-- evaluates the whole call once per row, exactly as it does ulid_flake().
-- Called with an argument that is not volatile, the result may be reused
-- across rows: call it with nextval() only (docs/extension.md).
CREATE FUNCTION @extschema@.ulid_flake_next(seq bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'ulid_flake_next'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.ulid_flake_next(bigint) IS
'The ID ulid_flake() would make with sequence value seq: call it as ulid_flake_next(nextval(''ulid_flake_seq''))';

-- Fails the install, naming what is missing, when ulidflake's migrations
-- (version 4 or later) are not in this schema. The argument is a constant:
-- no sequence value is used. It is typed bigint: with an integer, a
-- function ulid_flake_next(integer) planted in this schema by a role with
-- CREATE on it would be the better match, and run as the superuser that
-- runs this script (the extension is trusted).
SELECT @extschema@.ulid_flake_next(1::bigint);
