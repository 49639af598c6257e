-- ulid_flake_ext 1.1: the same function; the module reads the epoch that
-- ulidflake's migration 7 fixes at install (ulid_flake_state.epoch_ms),
-- and the setting ulid_flake.epoch_ms only on a schema of versions 4 to 6.
-- Migration 7 refuses to install beside version 1.0, whose module reads
-- the setting alone, and the function now calls a symbol that only the
-- 1.1 module has, so that a server left with the 1.0 module fails at the
-- call rather than make IDs under another epoch:
--
--   ALTER EXTENSION ulid_flake_ext UPDATE;   -- once the 1.1 files are on the server
\echo Use "ALTER EXTENSION ulid_flake_ext UPDATE" to load this file. \quit

CREATE OR REPLACE FUNCTION @extschema@.ulid_flake_next(seq bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'ulid_flake_next_1_1'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
