-- The body of ulid_flake_alone() (version 5) and of the DO block Migrate
-- runs before every step: the install schema is the installer's alone.
-- Refused (55U05) when a role other than the installing one owns it (a
-- schema owned by pg_database_owner is the database owner's), when
-- another role may create in it, or when another role owns an object of
-- the install's names (ulid_flake...) or an operator there, or a
-- trigger is on one of its tables: such a role could put its own
-- functions or state where the install and its callers find them, or run
-- its code when the install writes. Superusers, who may do all of this anyway, and the roles
-- that have the installing role's rights (members that inherit them) act
-- as the installer. It
-- follows the declaration of schema (name), the install schema; it pins
-- search_path itself and puts it back, for the DO block (the function
-- has SET search_path = pg_catalog, pg_temp too).
	path    pg_catalog.text := pg_catalog.current_setting('search_path');
	nsp     pg_catalog.oid;
	owner   pg_catalog.text;
	creates pg_catalog.text;
	objects pg_catalog.text;
	writers pg_catalog.text;
BEGIN
	PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
	SELECT n.oid INTO nsp FROM pg_namespace AS n WHERE n.nspname = schema;
	SELECT format('it is owned by %I', r.rolname) INTO owner
	FROM pg_namespace AS n, pg_database AS d, pg_roles AS r
	WHERE n.oid = nsp AND d.datname = current_database()
		AND r.oid = CASE WHEN n.nspowner = 'pg_database_owner'::regrole THEN d.datdba ELSE n.nspowner END
		AND NOT r.rolsuper AND r.rolname <> current_user;
	IF EXISTS (SELECT FROM pg_namespace AS n, aclexplode(n.nspacl) AS a
			WHERE n.oid = nsp AND a.grantee = 0 AND a.privilege_type = 'CREATE') THEN
		creates := 'PUBLIC may create in it';
	ELSE
		SELECT string_agg(quote_ident(r.rolname), ', ' ORDER BY r.rolname) || ' may create in it' INTO creates
		FROM pg_namespace AS n JOIN pg_roles AS r ON r.oid <> n.nspowner
		WHERE n.oid = nsp AND NOT r.rolsuper AND r.rolname <> current_user
			AND NOT pg_has_role(r.oid, current_user, 'USAGE') AND has_schema_privilege(r.oid, nsp, 'CREATE');
	END IF;
	SELECT string_agg(format('%s is owned by %I', o.what, r.rolname), ', ' ORDER BY o.what) INTO objects
	FROM (SELECT format('function %s', p.oid::regprocedure) AS what, p.proowner AS owner
			FROM pg_proc AS p WHERE p.pronamespace = nsp AND starts_with(p.proname::text, 'ulid_flake')
		UNION ALL SELECT format('relation %s', c.oid::regclass), c.relowner
			FROM pg_class AS c WHERE c.relnamespace = nsp AND starts_with(c.relname::text, 'ulid_flake')
		UNION ALL SELECT format('type %s', t.oid::regtype), t.typowner
			FROM pg_type AS t WHERE t.typnamespace = nsp AND starts_with(t.typname::text, 'ulid_flake')
		UNION ALL SELECT format('operator %s', o.oid::regoperator), o.oprowner
			FROM pg_operator AS o WHERE o.oprnamespace = nsp) AS o
	JOIN pg_roles AS r ON r.oid = o.owner
	WHERE NOT r.rolsuper AND r.rolname <> current_user;
	-- A trigger on its tables runs its code when the install writes
	-- them, as the installer (a role granted TRIGGER, as ALTER DEFAULT
	-- PRIVILEGES ... GRANT ALL gives, can add one): none is allowed. The
	-- install writes its state from the first statement after this.
	SELECT string_agg(format('trigger %I on %s', tg.tgname, c.oid::regclass), ', ' ORDER BY c.relname, tg.tgname) INTO writers
	FROM pg_trigger AS tg JOIN pg_class AS c ON c.oid = tg.tgrelid
	WHERE c.relnamespace = nsp AND starts_with(c.relname::text, 'ulid_flake') AND NOT tg.tgisinternal
		-- The install's own (version 5): its function is the install's.
		AND tg.tgfoid NOT IN (SELECT p.oid FROM pg_proc AS p WHERE p.pronamespace = nsp AND p.proname = 'ulid_flake_nodes_arrived' AND p.pronargs = 0);
	IF concat(owner, creates, objects, writers) <> '' THEN
		RAISE EXCEPTION 'ulid_flake: schema % is not the installing role''s (%) alone: %', quote_ident(schema), quote_ident(current_user),
				concat_ws('; ', owner, creates, objects, writers)
			USING ERRCODE = '55U05',
				HINT = format('Make %I the installer''s alone: REVOKE CREATE ON SCHEMA %I FROM the roles named, give it to %I (ALTER SCHEMA ... OWNER TO), drop what other roles made there and the triggers named, and REVOKE TRIGGER on its tables from other roles. Or install in a schema of its own that no other role may create in: CREATE SCHEMA ulid_flake (as %I), then migrations.WithSchema("ulid_flake"), or search_path = ulid_flake for the files.', schema, schema, current_user, current_user);
	END IF;
	PERFORM pg_catalog.set_config('search_path', path, true);
END
