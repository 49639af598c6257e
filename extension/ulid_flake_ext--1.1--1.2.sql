-- ulid_flake_ext 1.2: the same function, calling a symbol that only the 1.2
-- module has. That module reads ulid_flake_state once per statement (a
-- rolled-back change, or an UPDATE of the table, is not kept by a session
-- that read it) and only from a table of the install's owner in a schema
-- that role owns, or of a superuser, that no other role may write and that
-- has no trigger, and only a row recorded on this system and database (a
-- copy's waits for Migrate); a server left with an older module
-- fails at the call rather than keep the old behaviour. The 1.2 install
-- script no longer calls the function, so that pg_dump's output restores.
--
--   ALTER EXTENSION ulid_flake_ext UPDATE;   -- once the 1.2 files are on the server
\echo Use "ALTER EXTENSION ulid_flake_ext UPDATE" to load this file. \quit

CREATE OR REPLACE FUNCTION @extschema@.ulid_flake_next(seq bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'ulid_flake_next_1_2'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
