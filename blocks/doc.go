// Package blocks makes IDs in Go from blocks that PostgreSQL reserves, so
// that any number of instances make collision-free IDs with no SID, no
// lease and no per-instance configuration.
//
//	src, err := blocks.NewSource(db) // db: a *sql.DB on the migrated database
//	defer src.Close()
//	id, err := src.NewWait(ctx)
//
// # How it works
//
// A [Source] reserves a block of IDs (1,024 unless [WithSize] says
// otherwise) in one round trip: SELECT ulid_flake_block(n), which
// migration version 5 installs. The database makes the block's IDs with
// the ID function that DEFAULT uses on that node, ulid_flake() on a node
// with no SID and ulid_flake_scalable() on a node with one (every node of
// a mesh), and returns them in ascending order; the Source hands them out
// one by one. The IDs are the database's, bit for bit (docs/spec.md), in
// the stand-alone or the scalable layout. The first block after the
// server starts checks the node, as the ID functions' first call does,
// and a refusal (a copy of a mesh node, 55U01) is the reservation's error.
//
// # Why IDs never repeat
//
// The database never makes one value twice: a block's IDs and every other
// ID it makes, in a block or by DEFAULT, come from the same sequence (with
// the install's offset, and in a mesh the node's SID), so they inherit the
// guarantees of IDs made in the database (docs/guarantees.md), across
// restarts, failovers (through ulid_flake_check_node, which Migrate runs)
// and meshes: as long as fewer than 2^15 IDs are drawn on a node within
// one millisecond. A Source hands out each ID of its blocks at most once.
// Nothing is assigned per instance, so nothing can be assigned twice.
//
// # Time order
//
// An ID carries the database's clock when its block was made. A Source
// hands out no ID whose block was asked for longer ago than its validity
// (default [DefaultValidity], 1 s; [WithValidity]), on its monotonic
// clock: it drops the rest of the block and uses or reserves a newer one.
// So an ID's time is within the validity + 1 ms (its time is rounded
// down to the millisecond) before the moment it was handed out, and of
// two IDs handed out more than the validity apart, on any instances, the
// later one's time is not earlier (on a mesh, add the skew between the
// nodes' clocks). IDs handed out within the validity of each other may be
// in either order, even from one Source. The database's clock stepping
// back breaks the order as it does for IDs made by DEFAULT. The validity
// must exceed the reservation's round trip: a block that arrives older is
// dropped whole, and the reservation's error wraps [ErrBlockTooOld],
// naming the round trip (docs/observability.md says what to change when
// round trips grow that long under load).
//
// # Waiting
//
// When half of the current block is handed out, or half its validity has
// passed since it was asked for, the Source reserves the next in the
// background (one reservation at a time), so NewWait rarely waits for a round
// trip, at a high rate or a low one: it waits when a block is used up or
// too old before the next arrives, after a pause longer than half the
// validity, and on the first call. [Source.NewWait] waits at most
// until its context ends or [WithTimeout] (default 10 s) passes; then it
// returns an error wrapping [ErrUnavailable] and the cause. It retries
// failed reservations meanwhile, pausing 50 ms, then longer, up to 1 s,
// between them. A reservation still unanswered after WithTimeout (lib/pq
// stops no query once it is sent) is given up on, its block dropped when
// it comes, and a waiting NewWait sends another: at most two run at once.
// [WithObserver] reports each reservation and each wait, for metrics
// (docs/observability.md); it reports a reservation on the goroutine that
// made it, once a waiting NewWait may go on, so the [Observer] may call NewWait, and
// should return quickly.
//
// # Connections
//
// A Source reserves on a connection of its own: it takes one from the
// pool for its first reservation and keeps it, so that from then on
// callers that hold the pool's other connections (transactions that make
// IDs, as GORM's creates do) never keep it from reserving. Size a bounded pool
// (SetMaxOpenConns) for the callers plus one per Source. A broken
// connection goes back to the pool after the reservation that failed on
// it, and the next reservation takes another; [Source.Close] gives it
// back (SetConnMaxLifetime and SetConnMaxIdleTime do not apply while the
// Source holds it). A pool of one connection is not kept, as the Source would take it
// from its callers: each reservation borrows it, so a caller that holds
// it while it asks for an ID waits out [WithTimeout]. Whenever a wait ends
// while a reservation still waits for the pool, the error names the pool
// and the fix: raise SetMaxOpenConns, or give [NewSource] a *sql.DB of its
// own (sql.Open on the same URL).
//
// # What it costs
//
// One round trip per block, and at least one per half the validity while
// IDs are handed out; the IDs a block still holds when the instance stops
// or crashes, or when the block's validity ends, are never used
// (the database never makes them again). BENCHMARKS.md compares the
// rate and the round trips with the scalable layout under a lease.
//
// # Drivers, poolers and ORMs
//
// The Source runs one statement per reservation, autocommit, with one
// parameter, through any database/sql driver for PostgreSQL (pgx's
// stdlib, lib/pq), and through PgBouncer in session or transaction
// pooling (with pgx, use default_query_exec_mode=exec or simple_protocol
// there, as for any statement through a transaction pooler). The function
// is called by its schema-qualified name ([WithSchema]), so the
// connection's search_path does not change what runs. A Source is a
// flake.Source (gormplugin.WithSource(src)), and pgx, sqlc, ent and bun
// code calls NewWait where it calls a lease's.
package blocks
