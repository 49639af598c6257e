-- ulid_flake_ext 1.1: the same function; the module reads the epoch that
-- ulidflake's migration 7 fixes at install (ulid_flake_state.epoch_ms),
-- and the setting ulid_flake.epoch_ms only on a schema of versions 4 to 6.
-- Migration 7 refuses to install beside version 1.0, whose module reads
-- the setting alone:
--
--   ALTER EXTENSION ulid_flake_ext UPDATE;   -- once the 1.1 files are on the server
\echo Use "ALTER EXTENSION ulid_flake_ext UPDATE" to load this file. \quit
