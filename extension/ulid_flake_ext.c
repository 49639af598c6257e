/*
 * ulid_flake_ext: ulid_flake_next(seq), the ID that ulid_flake() makes,
 * computed in C from a sequence value the caller passes:
 *
 *   DEFAULT ulid_flake_next(nextval('ulid_flake_seq'))
 *
 * The ID is bit for bit ulid_flake()'s (migrations/sql/004):
 *
 *   ms  = clock_timestamp() in Unix ms - epoch                  (0 .. 2^43-1)
 *   x   = (seq mod P + offset) mod P,   P = 2^20 - 1
 *   id  = max(ms << 20 | (32 x mod P), 1)
 *
 * where offset is ulid_flake_state.offset of the schema this function is
 * in. Given the same sequence value in the same millisecond, both make the
 * same ID; so mixing them on one column (a default switched while inserts
 * run) is as safe as ulid_flake() alone: two IDs of one millisecond differ
 * unless their sequence values differ by a multiple of P.
 *
 * The epoch is ulid_flake()'s. From version 7 of the migrations on, it is
 * fixed at install and recorded in ulid_flake_state.epoch_ms, which is read
 * with the offset. Before version 7 (no such column), it follows the
 * setting ulid_flake.epoch_ms at every call, as ulid_flake() did, without
 * reading it per call: the module defines the setting and parses it in its
 * assign hook, which PostgreSQL runs on every change (SET, RESET, ALTER
 * ROLE/DATABASE ... SET, rollback).
 *
 * The state is read once per statement, under a fresh snapshot, and kept
 * for the statement that read it, known by its transaction (local id), its
 * start (statement_timestamp(): each query the client sends) and its
 * command id (which a write of the transaction moves on). So each query of
 * the client, and each statement inside a function that follows a write,
 * reads the table again and sees what committed since and what its own
 * transaction changed (an UPDATE, an ALTER TABLE); statements of one query
 * string with no write between them share a read. A COPY or INSERT ...
 * SELECT reads it once, however many rows it inserts; each parallel worker
 * reads it once. A rolled-back change, of a transaction or a savepoint, is
 * forgotten at the abort. A change to pg_proc (ulid_flake_build() and
 * ulid_flake_set_epoch() replace ulid_flake() or ulid_flake_epoch_ms() in
 * the transaction that writes the state) makes even a running statement
 * read it again. Each read is reported at DEBUG1.
 *
 * The table is read only when its owner is a superuser, or has the
 * privileges of both the schema's owner (who may drop any table in it and
 * make another) and the owner of the schema's ulid_flake_seq (the
 * install's owner: migration 4 altered that sequence, which only its owner
 * may, and created the table). Any other owner, a table put there by a
 * role that took over the schema, or one left behind by a former owner of
 * the schema, is refused with 55000 (docs/extension.md).
 *
 * Nor is it read while a role other than its owner and superusers may
 * write it: the table's ACL (pg_class.relacl, from the syscache) grants
 * INSERT, UPDATE, DELETE, TRUNCATE or TRIGGER (a trigger runs as whoever
 * writes the row) to another role or to PUBLIC, as ALTER DEFAULT PRIVILEGES
 * ... ON TABLES before the install or GRANT ... ON ALL TABLES after it do;
 * or a column the module reads (offset, epoch_ms, system_id, database_oid)
 * grants INSERT or UPDATE. 55000, naming the roles, with a REVOKE as the
 * hint. Nor while the table has a trigger (the install makes none; one
 * made while TRIGGER was granted outlives the REVOKE). Members of the
 * owner's role, and of pg_write_all_data, write it without a grant: they
 * are trusted as the owner is.
 *
 * Nor is a state recorded on another system or database read: from
 * version 4 on, the row records the system identifier and the database OID
 * it was drawn on, and its offset is that database's. A restore (pg_dump),
 * CREATE DATABASE ... TEMPLATE and pg_upgrade leave such a row until
 * ulid_flake_check_node() (Migrate) draws this database's own; logical
 * replication of the table (a publication FOR ALL TABLES) overwrites this
 * database's row with the publisher's. Either way IDs made here would have
 * the low bits of the other database's for the same sequence values: 55000
 * until the state is this database's. A promoted physical replica keeps
 * both, so it reads its state as before, and is told apart by its start:
 *
 * Nor is an ID made before the node is known (issue #40). From version 5
 * on, the row records the server start the node was last checked on
 * (started_at), and ulid_flake() runs the owner's node check on any other
 * start (a restart, a promoted replica, a copy). So does this module: when
 * started_at is NULL or not this server's start (PgStartTime,
 * pg_postmaster_start_time()), it calls the schema's
 * ulid_flake_verify(false) once the table passed the checks above, then
 * reads the state again. The check refuses (55U01..55U05, 55000) or
 * records this start; false: these IDs ignore the SID, so on a node of a
 * mesh it refuses with 55U04, as for ulid_flake(). A parallel worker may
 * not write: it fails instead (verify_node).
 */
#include "postgres.h"

#include <ctype.h>

#include "access/genam.h"
#include "access/parallel.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/reltrigger.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

PG_MODULE_MAGIC;

/* fmgr.h declares it from PostgreSQL 16 on; 15 needs it here (-Wmissing-prototypes). */
extern PGDLLEXPORT void _PG_init(void);

#define P				INT64CONST(1048575)	/* 2^20 - 1 */
#define MAX_MS			INT64CONST(8796093022207)	/* 2^43 - 1 */
#define DEFAULT_EPOCH	INT64CONST(1704067200000)	/* 2024-01-01, Unix ms */
/* Unix ms of PostgreSQL's epoch (2000-01-01), which GetCurrentTimestamp counts from. */
#define PG_EPOCH_UNIX_MS ((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/* ulid_flake.epoch_ms: the string, and what the assign hook made of it. */
static char *epoch_setting;
static int64 epoch_ms = DEFAULT_EPOCH;
static bool epoch_valid = true;

/*
 * This schema's ulid_flake_state, while state_known: the offset, and the
 * epoch when the table records one (version 7 on), as read by the
 * statement state_lxid/state_stmt/state_cid.
 */
static int64 offset;
static int64 state_epoch;
static bool state_has_epoch = false;
static bool state_known = false;
static LocalTransactionId state_lxid = InvalidLocalTransactionId;
static TimestampTz state_stmt = 0;
static CommandId state_cid = InvalidCommandId;

/*
 * Counts what makes the state unknown (a pg_proc invalidation, an abort),
 * so that one that happens while the state is read (table_open processes
 * invalidations) is not lost.
 */
static uint64 state_generation = 0;

/* This backend's local transaction id: MyProc->vxid.lxid from PostgreSQL 17 on. */
static inline LocalTransactionId
current_lxid(void)
{
#if PG_VERSION_NUM >= 170000
	return MyProc->vxid.lxid;
#else
	return MyProc->lxid;
#endif
}

/*
 * parse_epoch reads the setting as ulid_flake() does: empty means the
 * default; otherwise it must match ^\s*[+-]?[0-9]{1,18}\s*$.
 */
static bool
parse_epoch(const char *s, int64 *out)
{
	int64		v = 0;
	int			digits = 0;
	bool		neg = false;

	if (s == NULL || *s == '\0')
	{
		*out = DEFAULT_EPOCH;
		return true;
	}
	while (isspace((unsigned char) *s))
		s++;
	if (*s == '+' || *s == '-')
		neg = (*s++ == '-');
	for (; *s >= '0' && *s <= '9'; s++)
	{
		if (++digits > 18)
			return false;
		v = v * 10 + (*s - '0');
	}
	while (isspace((unsigned char) *s))
		s++;
	if (digits == 0 || *s != '\0')
		return false;
	*out = neg ? -v : v;
	return true;
}

/* An assign hook may not fail: a bad value is reported at the next call. */
static void
assign_epoch(const char *newval, void *extra)
{
	epoch_valid = parse_epoch(newval, &epoch_ms);
}

static void
forget(void)
{
	state_known = false;
	state_generation++;
}

static void
forget_state(Datum arg, int cacheid, uint32 hashvalue)
{
	forget();
}

/* A rolled-back transaction or savepoint may have changed what was read. */
static void
forget_on_abort(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		forget();
}

static void
forget_on_subabort(SubXactEvent event, SubTransactionId mySubid,
				   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		forget();
}

void
_PG_init(void)
{
	/* Any string is accepted, as for a placeholder: ulid_flake() reports bad ones at its call, so do we. */
	DefineCustomStringVariable("ulid_flake.epoch_ms",
							   "Epoch of Ulid-Flake IDs, in Unix milliseconds (empty: 1704067200000, 2024-01-01).",
							   NULL, &epoch_setting, "", PGC_USERSET, 0,
							   NULL, assign_epoch, NULL);
	CacheRegisterSyscacheCallback(PROCOID, forget_state, (Datum) 0);
	RegisterXactCallback(forget_on_abort, NULL);
	RegisterSubXactCallback(forget_on_subabort, NULL);
}

/*
 * check_owner refuses the state table rel of schema nsp unless its owner
 * is a superuser, or has the privileges of both the schema's owner and the
 * owner of the schema's ulid_flake_seq. "Has the privileges of" is
 * has_privs_of_role, PostgreSQL's own test for acting as an object's owner
 * (a member of the owner's role without INHERIT has them only through SET
 * ROLE, and then its objects are that role's), so that the database owner
 * counts as the owner of a schema owned by pg_database_owner (public,
 * from PostgreSQL 15 on).
 */
static void
check_owner(Relation rel, Oid nsp)
{
	Oid			owner = rel->rd_rel->relowner;
	Oid			nspowner;
	Oid			seqowner = InvalidOid;
	Oid			seq;
	HeapTuple	tup;

	if (superuser_arg(owner))
		return;
	tup = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(nsp));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for schema %u", nsp);
	nspowner = ((Form_pg_namespace) GETSTRUCT(tup))->nspowner;
	ReleaseSysCache(tup);
	seq = get_relname_relid("ulid_flake_seq", nsp);
	if (OidIsValid(seq))
	{
		tup = SearchSysCache1(RELOID, ObjectIdGetDatum(seq));
		if (HeapTupleIsValid(tup))
		{
			Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);

			if (c->relkind == RELKIND_SEQUENCE)
				seqowner = c->relowner;
			ReleaseSysCache(tup);
		}
	}
	if (has_privs_of_role(owner, nspowner) && OidIsValid(seqowner) && has_privs_of_role(owner, seqowner))
		return;

	table_close(rel, AccessShareLock);
	{
		const char *schema = quote_identifier(get_namespace_name(nsp));
		const char *who = quote_identifier(GetUserNameFromId(owner, false));
		const char *nspwho = quote_identifier(GetUserNameFromId(nspowner, false));
		const char *seqwho = OidIsValid(seqowner) ? quote_identifier(GetUserNameFromId(seqowner, false)) : "(no ulid_flake_seq)";

		if (OidIsValid(seqowner) && has_privs_of_role(owner, seqowner))
			/* The install's own table, in a schema someone else now owns. */
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("ulid_flake_next: %s.ulid_flake_state is owned by role %s, which does not own schema %s (owned by %s)",
							schema, who, schema, nspwho),
					 errdetail("The schema's owner can replace any table in it: the state is read only from a table of the install's owner in a schema that role owns, or of a superuser."),
					 errhint("Give the schema back to the install's owner (ALTER SCHEMA %s OWNER TO %s), or give the install to the schema's owner (REASSIGN OWNED BY %s TO %s, as a superuser).",
							 schema, who, who, nspwho)));
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ulid_flake_next: %s.ulid_flake_state is owned by role %s, which is neither a superuser nor the install's owner (the owner of %s.ulid_flake_seq: %s)",
						schema, who, schema, seqwho),
				 errdetail("Another role may have dropped the install's table and put its own there: the state is read only from a table of the install's owner in a schema that role owns, or of a superuser."),
				 errhint("If this table is not the install's, drop it and, as the install's owner, create the install's again (SELECT ulid_flake_check_node() then draws a new offset); install ulidflake in a schema its owner owns.")));
	}
}

/* The privileges on the table that let a role change what is read. */
#define TABLE_WRITES	(ACL_INSERT | ACL_UPDATE | ACL_DELETE | ACL_TRUNCATE | ACL_TRIGGER)
/* ... and on a column the module reads. */
#define COLUMN_WRITES	(ACL_INSERT | ACL_UPDATE)

/*
 * writers adds to who each grantee of the ACL acl (pg_class.relacl or
 * pg_attribute.attacl, as the syscache holds it) that holds one of privs
 * and is neither owner nor a superuser; PUBLIC is ACL_ID_PUBLIC.
 */
static List *
writers(Datum acl_datum, Oid owner, AclMode privs, List *who)
{
	Acl		   *acl = DatumGetAclP(acl_datum);
	AclItem    *item = ACL_DAT(acl);

	for (int i = 0; i < ACL_NUM(acl); i++)
	{
		Oid			grantee = item[i].ai_grantee;

		if ((ACLITEM_GET_PRIVS(item[i]) & privs) == 0 || grantee == owner)
			continue;
		if (grantee != ACL_ID_PUBLIC && superuser_arg(grantee))
			continue;
		who = list_append_unique_oid(who, grantee);
	}
	if ((Pointer) acl != DatumGetPointer(acl_datum))
		pfree(acl);
	return who;
}

/*
 * check_triggers refuses the state table rel of schema nsp when it has a
 * trigger of its own (not one PostgreSQL makes for a foreign key): the
 * install makes none, and a trigger runs as whoever writes the row (the
 * install's owner, a superuser), so it can change what is written, and
 * one made while a role held TRIGGER stays once that is revoked. Free when
 * there is none: the relcache holds the triggers.
 */
static void
check_triggers(Relation rel, Oid nsp)
{
	TriggerDesc *td = rel->trigdesc;
	StringInfoData names;

	if (td == NULL)
		return;
	initStringInfo(&names);
	for (int i = 0; i < td->numtriggers; i++)
	{
		if (td->triggers[i].tgisinternal)
			continue;
		if (names.len > 0)
			appendStringInfoString(&names, ", ");
		appendStringInfoString(&names, quote_identifier(td->triggers[i].tgname));
	}
	if (names.len == 0)
	{
		pfree(names.data);
		return;
	}
	table_close(rel, AccessShareLock);
	{
		const char *table = psprintf("%s.ulid_flake_state", quote_identifier(get_namespace_name(nsp)));

		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ulid_flake_next: %s has triggers (%s)", table, names.data),
				 errdetail("A trigger runs as whoever writes the state (the install's owner) and can change what is written: the state is read only from a table without triggers, as the install makes it."),
				 errhint("Drop them (DROP TRIGGER ... ON %s); then check that the state is the install's (SELECT * FROM %s).",
						 table, table)));
	}
}

/*
 * check_writers refuses the state table rel of schema nsp when a role
 * other than its owner and superusers may write it: INSERT, UPDATE,
 * DELETE, TRUNCATE or TRIGGER on the table, or INSERT or UPDATE on one of
 * the ncols columns cols (those the module reads; InvalidAttrNumber is
 * skipped). Both ACLs come from the syscache: with no grant (relacl and
 * attacl NULL, the install's case) this costs a lookup per column and one
 * for the table.
 */
static void
check_writers(Relation rel, Oid nsp, const AttrNumber *cols, int ncols)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			owner = rel->rd_rel->relowner;
	List	   *who = NIL;
	HeapTuple	tup;
	Datum		d;
	bool		isnull;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	d = SysCacheGetAttr(RELOID, tup, Anum_pg_class_relacl, &isnull);
	if (!isnull)
		who = writers(d, owner, TABLE_WRITES, who);
	ReleaseSysCache(tup);
	for (int i = 0; i < ncols; i++)
	{
		if (cols[i] == InvalidAttrNumber)
			continue;
		tup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(cols[i]));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for attribute %d of relation %u", cols[i], relid);
		d = SysCacheGetAttr(ATTNUM, tup, Anum_pg_attribute_attacl, &isnull);
		if (!isnull)
			who = writers(d, owner, COLUMN_WRITES, who);
		ReleaseSysCache(tup);
	}
	if (who == NIL)
		return;

	table_close(rel, AccessShareLock);
	{
		const char *table = psprintf("%s.ulid_flake_state", quote_identifier(get_namespace_name(nsp)));
		StringInfoData names;
		ListCell   *lc;

		initStringInfo(&names);
		foreach(lc, who)
		{
			Oid			grantee = lfirst_oid(lc);

			if (names.len > 0)
				appendStringInfoString(&names, ", ");
			appendStringInfoString(&names, grantee == ACL_ID_PUBLIC ? "PUBLIC" : quote_identifier(GetUserNameFromId(grantee, false)));
		}
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ulid_flake_next: %s may be written by %s, not only by its owner %s",
						table, names.data, quote_identifier(GetUserNameFromId(owner, false))),
				 errdetail("A role that may write the state can set another offset or epoch: IDs that collide with another node's, or carry another time. The state is read only from a table that no role but its owner and superusers may write (INSERT, UPDATE, DELETE, TRUNCATE or TRIGGER on it, INSERT or UPDATE on its columns)."),
				 errhint("REVOKE INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER ON %s FROM %s; then check that the state is the install's (SELECT * FROM %s).",
						 table, names.data, table)));
	}
}

/*
 * read_state reads ulid_flake_state in the schema of the function being
 * called: the offset, and the epoch when the table has a column epoch_ms
 * (version 7 on). It reads the heap directly (no SQL, so nothing planted
 * can run, and no SELECT privilege is needed: both values are no secret,
 * being written in the definitions of ulid_flake() and
 * ulid_flake_epoch_ms()).
 *
 * It returns true when the node must be checked before an ID is made: the
 * table has a column started_at (migration 5 on: the server start the
 * node was last checked on) and it is NULL or another start than this
 * server's (a restart, a promoted replica, a copy). The table's owner is
 * put in *owner.
 */
static bool
read_state(Oid fn_oid, Oid *owner)
{
	Oid			nsp = get_func_namespace(fn_oid);
	Oid			relid = get_relname_relid("ulid_flake_state", nsp);
	AttrNumber	att = InvalidAttrNumber;
	AttrNumber	eatt = InvalidAttrNumber;
	AttrNumber	satt = InvalidAttrNumber;
	AttrNumber	datt = InvalidAttrNumber;
	AttrNumber	tatt = InvalidAttrNumber;
	AttrNumber	matt = InvalidAttrNumber;
	Relation	rel;
	TupleDesc	desc;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		isnull = true;
	bool		enull = true;
	int64		v = -1;
	int64		e = 0;
	bool		snull = true;
	bool		dnull = true;
	int64		sys = 0;
	Oid			dbid = InvalidOid;
	bool		tnull = true;
	TimestampTz started = 0;
	bool		mesh = false;

	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ulid_flake_next: no table ulid_flake_state(offset bigint) in schema \"%s\"",
						get_namespace_name(nsp)),
				 errhint("Install ulidflake's migrations (version 4 or later) in the schema of the extension; a restore (pg_dump) creates the extension before them, so call it once the restore is done.")));

	/*
	 * The columns are looked up in the descriptor of the table as it is
	 * once the lock is held: a migration that adds or drops epoch_ms holds
	 * a stronger lock until it commits.
	 */
	rel = table_open(relid, AccessShareLock);
	check_owner(rel, nsp);
	*owner = rel->rd_rel->relowner;
	desc = RelationGetDescr(rel);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (a->attisdropped)
			continue;
		if (strcmp(NameStr(a->attname), "offset") == 0 && a->atttypid == INT8OID)
			att = a->attnum;
		else if (strcmp(NameStr(a->attname), "epoch_ms") == 0)
			eatt = a->attnum;
		else if (strcmp(NameStr(a->attname), "system_id") == 0 && a->atttypid == INT8OID)
			satt = a->attnum;
		else if (strcmp(NameStr(a->attname), "database_oid") == 0 && a->atttypid == OIDOID)
			datt = a->attnum;
		else if (strcmp(NameStr(a->attname), "started_at") == 0)
			tatt = a->attnum;
		else if (strcmp(NameStr(a->attname), "mesh") == 0 && a->atttypid == BOOLOID)
			matt = a->attnum;
	}
	if (att == InvalidAttrNumber || (eatt != InvalidAttrNumber && TupleDescAttr(desc, eatt - 1)->atttypid != INT8OID) ||
		(tatt != InvalidAttrNumber && TupleDescAttr(desc, tatt - 1)->atttypid != TIMESTAMPTZOID))
	{
		table_close(rel, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ulid_flake_next: ulid_flake_state in schema \"%s\" has no column offset bigint, or an epoch_ms that is not a bigint, or a started_at that is not a timestamp with time zone",
						get_namespace_name(nsp)),
				 errhint("Install ulidflake's migrations (version 4 or later) in the schema of the extension.")));
	}
	{
		/* started_at too: a role that may write it can skip the node's check. */
		AttrNumber	cols[6] = {att, eatt, satt, datt, tatt, matt};

		check_writers(rel, nsp, cols, lengthof(cols));
	}
	check_triggers(rel, nsp);

	/* The catalog snapshot: the latest committed row, also in parallel workers. */
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		Datum		d = heap_getattr(tup, att, desc, &isnull);

		if (!isnull)
			v = DatumGetInt64(d);
		if (eatt != InvalidAttrNumber)
		{
			d = heap_getattr(tup, eatt, desc, &enull);
			if (!enull)
				e = DatumGetInt64(d);
		}
		/* Where it was recorded (version 4 on: both columns). */
		if (satt != InvalidAttrNumber && datt != InvalidAttrNumber)
		{
			d = heap_getattr(tup, satt, desc, &snull);
			if (!snull)
				sys = DatumGetInt64(d);
			d = heap_getattr(tup, datt, desc, &dnull);
			if (!dnull)
				dbid = DatumGetObjectId(d);
		}
		/* The server start the node was last checked on (version 5 on). */
		if (tatt != InvalidAttrNumber)
		{
			d = heap_getattr(tup, tatt, desc, &tnull);
			if (!tnull)
				started = DatumGetTimestampTz(d);
		}
		/* Whether the node is of a mesh (a SID, or other nodes' rows). */
		if (matt != InvalidAttrNumber)
		{
			bool		mnull;

			d = heap_getattr(tup, matt, desc, &mnull);
			mesh = !mnull && DatumGetBool(d);
		}
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);

	if (v < 0 || v >= P || (eatt != InvalidAttrNumber && enull))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ulid_flake_next: ulid_flake_state in schema \"%s\" holds no offset in 0..1048574, or no epoch",
						get_namespace_name(nsp)),
				 errhint("Run migrations.Migrate, or SELECT ulid_flake_check_node() as its owner.")));
	/*
	 * pg_control_system() shows the system identifier, an unsigned 64-bit
	 * number, as a bigint: the migrations record it so.
	 */
	if (satt != InvalidAttrNumber && datt != InvalidAttrNumber &&
		(snull || dnull || sys != (int64) GetSystemIdentifier() || dbid != MyDatabaseId))
	{
		const char *schema = quote_identifier(get_namespace_name(nsp));

		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ulid_flake_next: %s.ulid_flake_state was recorded on another database (system %s, database %s), not on this one (system " INT64_FORMAT ", database %u)",
						schema, snull ? "unknown" : psprintf(INT64_FORMAT, sys), dnull ? "unknown" : psprintf("%u", dbid),
						(int64) GetSystemIdentifier(), MyDatabaseId),
				 errdetail("Its offset is that database's: IDs made here with the same sequence values would have the same low bits as its. A restore (pg_dump), CREATE DATABASE ... TEMPLATE or pg_upgrade leaves such a state until ulid_flake_check_node() runs; logical replication of ulid_flake_state (a publication FOR ALL TABLES) writes the publisher's over this database's."),
				 errhint("Run migrations.Migrate, or SELECT %s.ulid_flake_check_node() as the install's owner: it draws this database's own offset. If the table is replicated into this database, stop publishing ulid_flake_state: publish tables by name (CREATE PUBLICATION ... FOR TABLE ...).",
						 schema)));
	}
	/* The plain layout ignores the SID: in a mesh, two nodes make its IDs. */
	if (mesh)
		ereport(ERROR,
				(errcode(MAKE_SQLSTATE('5', '5', 'U', '0', '4')),
				 errmsg("ulid_flake mesh: ulid_flake_next() ignores the node's SID in a mesh (a node with a SID, or other nodes' rows in ulid_flake_nodes), where two nodes would make the same IDs"),
				 errhint("Use %s.ulid_flake_scalable() on the nodes of a mesh, with a SID for each (ulid_flake_set_sid).",
						 quote_identifier(get_namespace_name(nsp)))));
	offset = v;
	state_has_epoch = eatt != InvalidAttrNumber;
	state_epoch = e;
	ereport(DEBUG1,
			(errmsg_internal("ulid_flake_next: read %s.ulid_flake_state: offset " INT64_FORMAT ", epoch %s, checked on %s",
							 quote_identifier(get_namespace_name(nsp)), v,
							 state_has_epoch ? psprintf(INT64_FORMAT, e) : "from ulid_flake.epoch_ms",
							 tatt == InvalidAttrNumber ? "(no started_at)" : tnull ? "no server start" :
							 started == PgStartTime ? "this server start" : timestamptz_to_str(started))));
	return tatt != InvalidAttrNumber && (tnull || started != PgStartTime);
}

/*
 * verify_node checks this node before the first ID of a server start, as
 * ulid_flake() does (migration 5): it calls ulid_flake_verify(false) of
 * schema nsp, the owner's node check (SECURITY DEFINER, callable by any
 * role), which records this start in ulid_flake_state.started_at or
 * raises the check's refusal (55U01 to 55U05; 55000 for a state recorded
 * on another system or database). false: ulid_flake_next makes plain-layout
 * IDs, which ignore the SID, so on a node of a mesh (a SID, or other
 * nodes' rows in ulid_flake_nodes) it refuses with 55U04, as it does
 * ulid_flake(). The function is found by name and exact signature in nsp
 * (no search_path), and called only when its owner is a superuser or a
 * role whose privileges owner (the state's owner, checked by read_state)
 * has, and when the caller may execute it, as a call from SQL would be.
 */
static void
verify_node(Oid nsp, Oid owner)
{
	Oid			argtypes[1] = {BOOLOID};
	HeapTuple	tup;
	Oid			fn;
	Oid			proowner;
	AclResult	aclresult;
	const char *schema = quote_identifier(get_namespace_name(nsp));

	tup = SearchSysCache3(PROCNAMEARGSNSP, CStringGetDatum("ulid_flake_verify"),
						  PointerGetDatum(buildoidvector(argtypes, 1)), ObjectIdGetDatum(nsp));
	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ulid_flake_next: %s.ulid_flake_state records the server start its node was checked on (started_at), but there is no function %s.ulid_flake_verify(boolean) to check it on this one",
						schema, schema),
				 errdetail("On another server start (a restart, a promoted replica, a copy) the node is checked before its first ID, by ulid_flake_verify (migration 5)."),
				 errhint("Install ulidflake's migrations (version 5 or later) in the schema of the extension: run migrations.Migrate as the install's owner.")));
	fn = ((Form_pg_proc) GETSTRUCT(tup))->oid;
	proowner = ((Form_pg_proc) GETSTRUCT(tup))->proowner;
	ReleaseSysCache(tup);
	if (!superuser_arg(proowner) && !has_privs_of_role(owner, proowner))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ulid_flake_next: %s.ulid_flake_verify(boolean) is owned by role %s, which is neither a superuser nor the install's owner (the owner of %s.ulid_flake_state: %s)",
						schema, quote_identifier(GetUserNameFromId(proowner, false)), schema,
						quote_identifier(GetUserNameFromId(owner, false))),
				 errdetail("The node's check is called only when it is the install's."),
				 errhint("Drop that function and run migrations.Migrate as the install's owner.")));
	if (IsParallelWorker())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("ulid_flake_next: the node of %s.ulid_flake_state has not been checked since the server started, and a parallel worker may not check it",
						schema),
				 errdetail("The check (%s.ulid_flake_verify) writes the state; parallel workers may not write.", schema),
				 errhint("Make one ID in a statement of its own first (SELECT %s.ulid_flake_next(nextval('%s.ulid_flake_seq'))), which checks the node, then run the query again.",
						 schema, schema)));
#if PG_VERSION_NUM >= 160000
	aclresult = object_aclcheck(ProcedureRelationId, fn, GetUserId(), ACL_EXECUTE);
#else
	aclresult = pg_proc_aclcheck(fn, GetUserId(), ACL_EXECUTE);
#endif
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_FUNCTION, psprintf("%s.ulid_flake_verify", schema));
	ereport(DEBUG1,
			(errmsg_internal("ulid_flake_next: verifying the node: %s.ulid_flake_verify(false)", schema)));
	(void) OidFunctionCall1(fn, BoolGetDatum(false));
}

/*
 * Each version of the extension calls a symbol of its own, so that a
 * server whose module is older than the catalog's version fails at the
 * call ("could not find function") instead of behaving as the old module:
 * ulid_flake_next_1_1 (1.1: the epoch from ulid_flake_state) and
 * ulid_flake_next_1_2 (1.2: the state read once per statement, and only
 * from a table of a trusted owner that no other role may write, recorded
 * on this database). ulid_flake_next and
 * ulid_flake_next_1_1 stay for catalogs of versions 1.0 and 1.1, which
 * this module serves as 1.2.
 */
PG_FUNCTION_INFO_V1(ulid_flake_next_1_2);
PG_FUNCTION_INFO_V1(ulid_flake_next_1_1);
PG_FUNCTION_INFO_V1(ulid_flake_next);

Datum
ulid_flake_next_1_2(PG_FUNCTION_ARGS)
{
	return ulid_flake_next(fcinfo);
}

Datum
ulid_flake_next_1_1(PG_FUNCTION_ARGS)
{
	return ulid_flake_next(fcinfo);
}

Datum
ulid_flake_next(PG_FUNCTION_ARGS)
{
	int64		seq = PG_GETARG_INT64(0);
	TimestampTz now = GetCurrentTimestamp();	/* clock_timestamp(), in µs */
	LocalTransactionId lxid = current_lxid();
	TimestampTz stmt = GetCurrentStatementStartTimestamp();
	CommandId	cid = GetCurrentCommandId(false);
	int64		ms;
	int64		x;

	if (!state_known || lxid != state_lxid || stmt != state_stmt || cid != state_cid)
	{
		uint64		gen = state_generation;
		Oid			owner;

		state_known = false;
		if (read_state(fcinfo->flinfo->fn_oid, &owner))
		{
			Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);

			/*
			 * Not checked on this server start: check it (or fail), then
			 * read what the check wrote. It rewrote the ID functions
			 * (forgetting the state) and moved the command counter on: the
			 * statement's later calls are known by the new command id.
			 */
			verify_node(nsp, owner);
			forget();
			gen = state_generation;
			if (read_state(fcinfo->flinfo->fn_oid, &owner))
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("ulid_flake_next: %s.ulid_flake_verify(false) returned, but %s.ulid_flake_state does not record this server start (started_at)",
								quote_identifier(get_namespace_name(nsp)), quote_identifier(get_namespace_name(nsp))),
						 errhint("Another session may have changed the state meanwhile: try again.")));
			cid = GetCurrentCommandId(false);
		}
		/* Something that made the state unknown happened while reading: read again next call. */
		state_known = (gen == state_generation);
		state_lxid = lxid;
		state_stmt = stmt;
		state_cid = cid;
	}
	if (!state_has_epoch && !epoch_valid)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("ulid_flake.epoch_ms must be an integer (Unix milliseconds), not \"%s\"", epoch_setting)));

	/* Whole milliseconds, rounded down, from the epoch. */
	ms = now / 1000 - (now % 1000 < 0) + PG_EPOCH_UNIX_MS - (state_has_epoch ? state_epoch : epoch_ms);
	if (ms < 0 || ms > MAX_MS)
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("ulid_flake: clock outside the epoch range (%s)",
						state_has_epoch ? "ulid_flake_epoch_ms" : "ulid_flake.epoch_ms")));

	/* seq mod P, never negative (nextval() never is; any bigint is taken). */
	x = seq % P;
	if (x < 0)
		x += P;
	x = (x + offset) % P;
	/* 32 x mod P: x rotated left by 5 bits within 20 bits, as ulid_flake(). */
	PG_RETURN_INT64(Max((ms << 20) | ((x * 32) % P), 1));
}
