-- ulid_flake_ext 1.2: ulid_flake_next(seq), in the schema of ulidflake's
-- migrations (version 4 or later):
--
--   CREATE EXTENSION ulid_flake_ext SCHEMA <the schema of ulid_flake()>;
--   ALTER TABLE t ALTER COLUMN id SET DEFAULT ulid_flake_next(nextval('ulid_flake_seq'));
--
-- This script only creates the function; it calls nothing. pg_dump writes
-- CREATE EXTENSION before the migrations' table ulid_flake_state, so a
-- script that checked for it (as 1.0's and 1.1's call did) failed every
-- restore of a database that uses the extension. The check is the
-- function's own: called where the migrations are missing, it fails with
-- 55000, naming what is missing.
\echo Use "CREATE EXTENSION ulid_flake_ext" to load this file. \quit

-- STABLE, not VOLATILE, although it reads the clock: COPY FROM then keeps
-- inserting in batches for a default ulid_flake_next(nextval(...)), since
-- COPY looks for volatile functions other than nextval(). Everywhere else
-- the planner sees nextval(), which is volatile, in the argument, and
-- evaluates the whole call once per row, exactly as it does ulid_flake().
-- Called with an argument that is not volatile, the result may be reused
-- across rows: call it with nextval() only (docs/extension.md).
--
-- The symbol is 1.2's own, as 1.1's was: the 1.2 module reads the state
-- once per statement (so a rolled-back or directly updated state is not
-- kept) and only from a table of the install's owner in a schema that role
-- owns, or of a superuser, that no other role may write and that has no
-- trigger, and only a row recorded on this system and database (not one a
-- restore, a template copy, pg_upgrade or a subscription brought before
-- Migrate runs). A server still carrying an older module (its
-- files not updated, a replica or an upgrade that kept the old package)
-- then fails at the call, "could not find function", instead of making IDs
-- from a state another role may have put there.
--
-- Where ulid_flake_state has started_at (migration 5 on: the server start
-- the node was last checked on), the first call on another server start (a
-- restart, a promoted replica, a copy) runs the node check first, as
-- ulid_flake() does: it calls this schema's ulid_flake_verify(false)
-- (SECURITY DEFINER, granted to PUBLIC), found by name and signature, as
-- the calling role; so it writes the state then, though declared STABLE.
-- A refusal makes no ID (55U01 to 55U05, 55000); on a node of a mesh (a
-- SID, or other nodes' rows) it refuses with 55U04, since these IDs ignore
-- the SID. A parallel worker that finds the node unchecked fails (55000)
-- instead; called with nextval(), the function runs in the leader. The
-- symbol stays 1.2's: a 1.2 module built before this check makes IDs
-- without it (docs/extension.md, "The first ID after a server start").
CREATE FUNCTION @extschema@.ulid_flake_next(seq bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'ulid_flake_next_1_2'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.ulid_flake_next(bigint) IS
'The ID ulid_flake() would make with sequence value seq: call it as ulid_flake_next(nextval(''ulid_flake_seq''))';
