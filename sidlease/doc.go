// Package sidlease gives every running instance its own SID (0..31) for the
// scalable Ulid-Flake layout, held in the PostgreSQL the application already
// uses, so that IDs from different instances never collide.
//
//	lease, err := sidlease.Acquire(ctx, pool, "orders-service") // or AcquireDB(ctx, db, ...)
//	defer lease.Close()
//	id, err := lease.NewWait(ctx) // scalable layout, SID lease.SID()
//
// Deployments (PgBouncer, failover, several writable nodes) are described in
// docs/deployments.md; this documentation gives the design, its argument
// and its assumptions.
//
// # How it holds a SID
//
// A lease is a row of a lease table (public.ulid_flake_sid_leases, the same
// for every role, unless [WithSchema] names another schema; see "The lease
// table"): one row per namespace and SID, with the holder's
// fencing token, an expiry in the server's clock, and minted_below, a
// ceiling of the IDs made with the SID. Every statement is a single
// autocommit statement in the simple protocol, so the lease works on a
// direct connection and through PgBouncer in session or transaction pooling
// mode. It uses the pool you give it: no connection of its own, no session
// state.
//
//   - Acquire claims a SID whose row has expired (or was released), in one
//     UPDATE ... FOR UPDATE SKIP LOCKED. The claim writes a new fencing
//     token, 63 random bits drawn by the claimant: never a number derived
//     from the row's old token, which a failover may have lost. It sets the
//     expiry to the server's now() + 2V + MaxClockAhead (V is the validity,
//     default 2s; the expiry covers the wait below and a renewal's worth
//     after it, and is extended for a longer wait) and reads the server's
//     clock. The claimant then waits V, and until its
//     clock passes the floor (see "Clocks") before it makes IDs.
//   - Every V/4 a renewal extends the expiry with UPDATE ... WHERE token =
//     the holder's token AND the row has not expired. One row updated
//     proves, in that round trip, that the server's row still carries this
//     holder's claim, unexpired: a later claim on that server wrote another
//     token, and a server that never had the claim (a replica promoted
//     after missing it) has another token too. Zero rows means the SID was
//     taken, the claim lost, or the claim expired: making IDs stops at once
//     and the lease claims a SID again by itself, waiting as any new holder
//     does.
//   - A holder makes IDs only until V after it sent its last renewal that
//     succeeded, on its own monotonic clock. A renewal that fails or hangs
//     stops nothing early, but nothing renews the validity either; the next
//     one that succeeds, before the row expires, restores it.
//
// # The lease table
//
// A namespace is exclusive within one lease table, so every instance of an
// application must use the same table, whatever its role and search_path.
// The table is ulid_flake_sid_leases in schema public, or in the schema
// [WithSchema] names, always schema-qualified: the name is never looked up
// on the search_path. A role with a schema named after itself (the default
// search_path is "$user", public), a connection string that sets
// search_path (options=-c search_path=...), or a search_path that starts
// with pg_temp, all use the same table.
//
// The lease creates its table itself, so that it needs no SQL install,
// under the install's rule (docs/sql.md): the schema is its owner's alone.
// The lease trusts the schema's owner (and the owner's members and
// superusers, who act as it), and every role granted to write the table,
// not to change the table or rewrite its rows, which can give one SID to
// two holders. Acquire refuses ([ErrLeaseTable], before it writes
// anything):
//
//   - a schema in which any other role, PUBLIC included, may create
//     objects: such a role could create the lease table first, with
//     triggers, rules, policies or defaults that run as every holder. The
//     error gives the REVOKE, and the other way, a schema of the
//     application's own (CREATE SCHEMA ulid_flake, WithSchema);
//   - a table that a role other than the schema's owner owns;
//   - a table on which another role may TRIGGER, TRUNCATE, REFERENCES or
//     MAINTAIN (granted, or given by ALTER DEFAULT PRIVILEGES when the
//     lease created it), or that has a trigger: code that would run as
//     every holder. The error names the roles and the REVOKE;
//   - a missing table, when this role is not the schema's owner: the error
//     gives the statements to run once as the owner (the CREATE TABLE, and
//     the GRANTs of USAGE on the schema and SELECT, INSERT, UPDATE on the
//     table to this role), or WithSchema naming a schema this role owns;
//   - a missing schema.
//
// So the first Acquire of a role that owns the schema creates the table,
// and the application's other roles use it with those privileges granted
// (a role without them gets the GRANTs in its error). No lock serialises
// the creation, so no other role can stall it: instances that create the
// table at once race on the catalog, and those that lose use the winner's
// table. The server's errors are read by SQLSTATE through any driver whose
// errors have a SQLState method: pgx's (through [Acquire] or pgx's stdlib)
// and lib/pq's ([AcquireDB]) get the same explanations.
//
// Release 0.1.0 looked the unqualified name up on the search_path, so a
// role that owns a schema named after itself kept its leases there.
// Without WithSchema, Acquire refuses ([ErrLeaseTable]) when the name alone
// would find, for its role and search_path, another table than the one it
// uses: an instance of 0.1.0, or one with WithSchema naming that schema,
// would hold the same SIDs. The error names both tables: name the old
// one's schema for every instance with WithSchema, or stop every instance
// and move its rows (docs/deployments.md, "The lease table"). Nothing is
// created before that check.
//
// # Why two holders never make IDs with one SID
//
// Let S be the send time of the old holder's last successful renewal. The
// server ran it at some time E0 >= S and set the expiry to E0 + V, so a new
// holder can take the SID on that server only at T >= E0 + V >= S + V, when
// the old holder, which stops at S + V, has stopped. The new holder also
// waits V after T before making IDs: that covers what the expiry cannot, a
// failover to a replica that lost the last renewals (its row shows an
// earlier expiry): the old holder's last renewal ran on the old primary
// before it was fenced, at S < F; the new primary took the claim at T >= F;
// the new holder makes IDs from T + V > S + V. A claim that was lost with the
// old primary gives its holder a token that the new primary's row does not
// carry, and no later claim draws it again (but with probability 2^-63 per
// pair of claims): that holder's next renewal updates no row and it stops.
// The holder before it, whose token the promoted replica still carries, is
// not let back in either: its row there expired before the lost claim was
// made (a claim takes only expired rows, and the replica's expiry is no
// later than the old primary's), so its renewal updates no row, and it
// claims again and waits like any new holder.
//
// # Clocks
//
// Not making IDs at the same time is not enough: IDs carry their holder's
// clock, and a holder whose clock runs ahead makes IDs that a later holder
// of the same SID, with a correct clock, would make again. So:
//
//   - every renewal reads the server's clock. A holder whose clock is more
//     than [MaxClockAhead] ahead of it makes no ID: New returns
//     [ErrClockAhead], and Acquire returns it and releases the SID;
//   - a holder never returns an ID at or above its ceiling: its own clock
//     plus V at its last renewal, which the renewal records in
//     minted_below, unless that is past the server's time plus V plus
//     MaxClockAhead (a clock too far ahead: the renewal records nothing,
//     the holder makes no ID, and its ceiling is no higher than
//     minted_below);
//   - a new holder makes IDs only above its floor: the higher of the row's
//     minted_below and the server's time at its claim plus V plus
//     MaxClockAhead. After its wait of V it waits until its clock passes
//     the floor, for at most [MaxClockWait]; further behind, Acquire
//     releases the SID and returns [ErrClockBehindFloor], which names both
//     times.
//
// The second term of the floor covers a lost ceiling: when a failover lost
// the last holder's renewals, minted_below is stale, but that holder's
// last successful renewal ran at a server time E0 before the new claim's
// T, so its IDs are all below E0 + V + MaxClockAhead <= T + V +
// MaxClockAhead. Holders' clocks need not agree with each other or with the
// server's beyond that: the later holder waits out the difference.
//
// # Assumptions
//
// The lease never lets two holders make the same ID, through a failover that
// loses the lease's last writes (claims, renewals, ceilings) included, when:
//
//  1. a failover fences the old primary: once a replica is promoted, the old
//     one commits no lease write (no split brain);
//  2. the clocks of the holders and of the servers run at the rate of real
//     time (not that they agree): a drift of d per second costs d*V of
//     margin, which the wait of V covers many times over;
//  3. the server's clock does not step back, and a promoted replica's clock
//     is not behind the old primary's, by more than the time between the old
//     holder's last renewal and the new claim (servers kept by NTP are
//     within milliseconds; that time is at least the failover's);
//  4. every holder of a namespace uses the same epoch (ceilings are IDs);
//  5. the lease table has one writable server at a time: a database that
//     subscribes to another node's publication (several writable nodes) is
//     refused with [ErrMesh].
//
// Clocks more than MaxClockAhead ahead of the server's, or too far behind
// the SID's floor, are refused (ErrClockAhead, ErrClockBehindFloor)
// rather than assumed away.
// Synchronous replication is not needed; it changes nothing here.
//
// # What it costs
//
// Two statements per renewal interval per instance (one UPDATE every V/4:
// 2 a second with the default), a few statements in Acquire and a wait of
// V + MaxClockAhead (3s with the default) when the clocks agree. A lost
// lease is detected at the next renewal (V/4) and stops making IDs within V.
// A crashed holder's SID is free again V after its last renewal (2V +
// MaxClockAhead after a claim). Capacity: the scalable layout has 15 random bits, at least 64 IDs
// per millisecond per instance (flake.ScalableMinBurst), 32 instances per
// namespace; past 32, use another namespace per group of instances (with
// tables whose IDs cannot meet), or stand-alone IDs.
//
// # Limits
//
// V is between [MinValidity] and [MaxValidity]; a schema name has 1 to 63
// bytes and is not a temporary schema (pg_temp, pg_temp_N); a namespace has
// at most [MaxNamespaceLen] (255) bytes; names and namespaces hold no NUL
// and are valid UTF-8; no option is nil. Anything else is flake.ErrOption
// (ulidflake.ErrOption), before any statement runs, in an error that
// repeats at most 64 bytes of the bad value.
//
// # Settings
//
// The lease runs in pgx's simple protocol, which pgx refuses on a
// connection whose standard_conforming_strings is off (a database owner can
// set that): Acquire then fails with pgx's error, which names the setting,
// and writes nothing. Every name reaches SQL quoted as an identifier, the
// table's always with its schema, or as a parameter, and every value as a
// parameter; every built-in function, operator and
// non-keyword type is named in pg_catalog with exact argument types, so no
// setting, and no object planted on the search_path (even one that puts
// pg_catalog after another schema), changes what the SQL means.
//
// # What an operator sees
//
// The lease table shows who holds what (holder: host, pid and program;
// expires_at; token; minted_below). Acquire returns [ErrNoFreeSID] naming
// the namespace when 32 rows are live. While the lease cannot be proven
// held, New returns [ErrLeaseLost] and NewWait waits (for its context) for
// the lease to hold a SID again. [WithLogger] reports what the lease does
// by itself: failed renewals, a lost SID, claims again, a clock ahead;
// [WithObserver] counts the same for metrics (docs/observability.md). A
// role that may not create the table, or use it, gets an error that says
// which statements to run once.
package sidlease
