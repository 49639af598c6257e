-- ulidflake declarations: the domain and the current signature of every
-- function that any role may call, for tools that read a schema and run
-- nothing (sqlc's `schema` list, say), in place of the migrations. The
-- migrations create most functions inside DO blocks, which such tools do
-- not read, and create internal tables that must not become models.
--
-- The bodies are stubs: install with the migrations (docs/sql.md), never
-- with this file. Its plain CREATE (no OR REPLACE) fails where the real
-- functions exist; where they do not, every stub raises. A database test
-- (integration_test/migrate/declarations_test.go) checks this file against
-- the catalog of an install at the latest version: the same names,
-- argument names and types, defaults and result types, and nothing else.

-- Migration 002. A bigint that holds an ID and refuses negative values.
CREATE DOMAIN ulid_flake_id AS bigint
	CONSTRAINT "ulid_flake_id: negative value" CHECK (VALUE >= 0);

-- The ID functions: a new ID, for DEFAULT clauses.
CREATE FUNCTION ulid_flake() RETURNS bigint
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

CREATE FUNCTION ulid_flake_scalable(sid integer DEFAULT NULL) RETURNS bigint
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

-- Version 5. n new IDs (1 to 65536), ascending, made by the ID function
-- DEFAULT uses on this node: blocks of IDs for package blocks.
CREATE FUNCTION ulid_flake_block(n integer) RETURNS bigint[]
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

-- Text forms: the 13 characters, and with a prefix (inv_00EZJCRCB4650).
CREATE FUNCTION ulid_flake_encode(id bigint) RETURNS text
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

CREATE FUNCTION ulid_flake_encode(id bigint, prefix text) RETURNS text
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

CREATE FUNCTION ulid_flake_decode(s text) RETURNS bigint
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

CREATE FUNCTION ulid_flake_decode(s text, prefix text) RETURNS bigint
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

-- Time: an ID's time, a new ID at a given time (backfills), and the
-- bounds of a millisecond for range queries on the key.
CREATE FUNCTION ulid_flake_time(id bigint) RETURNS timestamp with time zone
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

CREATE FUNCTION ulid_flake_at(t timestamp with time zone) RETURNS bigint
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

CREATE FUNCTION ulid_flake_min(t timestamp with time zone) RETURNS bigint
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

CREATE FUNCTION ulid_flake_max(t timestamp with time zone) RETURNS bigint
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

-- What the ID functions read: the epoch (Unix ms), and the SID in force.
CREATE FUNCTION ulid_flake_epoch_ms() RETURNS bigint
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;

CREATE FUNCTION ulid_flake_node_sid() RETURNS integer
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'ulidflake declarations.sql is for tools: install the migrations'; END$$;
