package sidlease

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ulidflake/ulidflake/flake"
)

// The statements name every function, operator and type that is not a
// keyword in pg_catalog, with exact argument types: no object on the
// caller's search_path, nor a search_path that puts pg_catalog after
// another schema, changes what they run.

// serverMs is the server's clock in Unix ms, in any TimeZone or DateStyle.
const serverMs = `pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.now()) OPERATOR(pg_catalog.*) 1000::double precision)::bigint`

// after is a timestamptz expression: now plus the microseconds of a
// bigint parameter.
func after(param string) string {
	return `pg_catalog.now() OPERATOR(pg_catalog.+) (` + param + `::double precision OPERATOR(pg_catalog.*) interval '1 microsecond')`
}

// heldBy matches the row of namespace $1 and SID $2 that token $3 holds.
const heldBy = `namespace OPERATOR(pg_catalog.=) $1::pg_catalog.text AND sid OPERATOR(pg_catalog.=) $2::int
	AND token OPERATOR(pg_catalog.=) $3::bigint`

// setup checks the lease table, creates it if it is missing, and adds the
// namespace's 32 rows. Its statements are idempotent and safe to run from
// many instances at once.
func (l *Lease) setup(ctx context.Context) error {
	ddl := `CREATE TABLE IF NOT EXISTS ` + l.table + ` (
	namespace  pg_catalog.text NOT NULL,
	sid        int         NOT NULL CHECK (sid OPERATOR(pg_catalog.>=) 0 AND sid OPERATOR(pg_catalog.<=) 31),
	token      bigint      NOT NULL DEFAULT 0,
	holder     pg_catalog.text,
	acquired_at pg_catalog.timestamptz,
	expires_at pg_catalog.timestamptz NOT NULL DEFAULT '-infinity',
	minted_below bigint    NOT NULL DEFAULT 0,
	PRIMARY KEY (namespace, sid))`
	// The table, the table the name alone finds on this role's search_path
	// (where earlier releases kept it), this role and its search_path.
	var table, found int64
	var foundSchema, role, path string
	var oneName any // NULL: to_regclass('') is an error before PostgreSQL 16
	if l.oneName != "" {
		oneName = pgx.Identifier{l.oneName}.Sanitize()
	}
	if err := l.db.queryRow(ctx, `SELECT coalesce(pg_catalog.to_regclass($1::pg_catalog.text)::pg_catalog.oid::bigint, 0),
		coalesce(c.oid::bigint, 0), coalesce(n.nspname::pg_catalog.text, ''),
		CURRENT_USER::pg_catalog.text, pg_catalog.current_setting('search_path'::pg_catalog.text)
		FROM (SELECT 1) one
		LEFT JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass($2::pg_catalog.text)::pg_catalog.oid
		LEFT JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace`,
		l.table, oneName).Scan(&table, &found, &foundSchema, &role, &path); err != nil {
		return l.wrap("looking for the lease table", err)
	}
	if l.oneName != "" && found != 0 && found != table {
		// The name alone finds another table for this role: instances of
		// an earlier release, or with another search_path, use that one.
		return fmt.Errorf("%w: the lease table is %s for every role, but for role %s (search_path %s) %s is %s.%s, "+
			"which earlier releases used: instances using both tables would hold the same SIDs. Name that table for every instance, "+
			"WithTable(%q, %q), or stop every instance and move its rows to %s (docs/deployments.md, \"The lease table\")",
			ErrLeaseTable, l.table, pgx.Identifier{role}.Sanitize(), quote(path), pgx.Identifier{l.oneName}.Sanitize(),
			pgx.Identifier{foundSchema}.Sanitize(), pgx.Identifier{l.oneName}.Sanitize(), foundSchema, l.oneName, l.table)
	}
	if table == 0 {
		// Serialised, in one implicit transaction: CREATE TABLE IF NOT
		// EXISTS alone races with itself.
		q := `SELECT pg_catalog.pg_advisory_xact_lock(7373474917); ` + ddl
		if _, err := l.db.exec(ctx, q); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && (pgErr.Code == "42501" || pgErr.Code == "3F000") {
				return l.wrap(fmt.Sprintf("creating the lease table: role %s cannot create it in schema %s "+
					"(the schema is missing, or the role may not create tables in it: on PostgreSQL 15 and later "+
					"only the database's owner may create tables in public unless granted). "+
					"Create it once as the database's owner, and let every role of the application use it:\n%s;\n"+
					"GRANT SELECT, INSERT, UPDATE ON %s TO %s;\n"+
					"or name, for every instance, a table in a schema this role may create tables in: WithTable(schema, name)",
					pgx.Identifier{role}.Sanitize(), l.opts.table[:1].Sanitize(), ddl, l.table, pgx.Identifier{role}.Sanitize()), err)
			}
			return l.wrap(fmt.Sprintf("creating the lease table (a role that may not create it needs it created once:\n%s)", ddl), err)
		}
	}
	// What the table is, and whether the lease's statements would run
	// code other than its own: triggers, rules, row security policies, or
	// functions, operators and types that are not built in, in its
	// defaults, constraints, indexes and columns. Whoever may add them
	// would run their code as every holder.
	var persistence, kind, triggers string
	var rules, rowSecurity, hasCeiling bool
	var code int64
	if err := l.db.queryRow(ctx, `SELECT c.relpersistence::pg_catalog.text, c.relkind::pg_catalog.text, c.relhasrules, c.relrowsecurity,
		(SELECT coalesce(pg_catalog.string_agg(pg_catalog.quote_ident(g.tgname::pg_catalog.text), ', '::pg_catalog.text), '')
			FROM pg_catalog.pg_trigger g WHERE g.tgrelid OPERATOR(pg_catalog.=) c.oid AND NOT g.tgisinternal),
		(SELECT pg_catalog.count(*) FROM pg_catalog.pg_depend d
			WHERE d.refclassid OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid,
				'pg_catalog.pg_operator'::pg_catalog.regclass::pg_catalog.oid, 'pg_catalog.pg_type'::pg_catalog.regclass::pg_catalog.oid,
				'pg_catalog.pg_opclass'::pg_catalog.regclass::pg_catalog.oid, 'pg_catalog.pg_opfamily'::pg_catalog.regclass::pg_catalog.oid])
			AND ((d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid
					AND (d.objid OPERATOR(pg_catalog.=) c.oid OR d.objid OPERATOR(pg_catalog.=) ANY (
						SELECT i.indexrelid FROM pg_catalog.pg_index i WHERE i.indrelid OPERATOR(pg_catalog.=) c.oid)))
				OR (d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass::pg_catalog.oid
					AND d.objid OPERATOR(pg_catalog.=) ANY (SELECT a.oid FROM pg_catalog.pg_attrdef a WHERE a.adrelid OPERATOR(pg_catalog.=) c.oid))
				OR (d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_constraint'::pg_catalog.regclass::pg_catalog.oid
					AND d.objid OPERATOR(pg_catalog.=) ANY (SELECT k.oid FROM pg_catalog.pg_constraint k WHERE k.conrelid OPERATOR(pg_catalog.=) c.oid))
				OR (d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_trigger'::pg_catalog.regclass::pg_catalog.oid
					AND d.objid OPERATOR(pg_catalog.=) ANY (SELECT g.oid FROM pg_catalog.pg_trigger g WHERE g.tgrelid OPERATOR(pg_catalog.=) c.oid))
				OR (d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass::pg_catalog.oid
					AND d.objid OPERATOR(pg_catalog.=) ANY (SELECT r.oid FROM pg_catalog.pg_rewrite r WHERE r.ev_class OPERATOR(pg_catalog.=) c.oid))
				OR (d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_policy'::pg_catalog.regclass::pg_catalog.oid
					AND d.objid OPERATOR(pg_catalog.=) ANY (SELECT p.oid FROM pg_catalog.pg_policy p WHERE p.polrelid OPERATOR(pg_catalog.=) c.oid)))),
		EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid
			AND a.attname OPERATOR(pg_catalog.=) 'minted_below'::pg_catalog.name AND NOT a.attisdropped)
		FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass($1::pg_catalog.text)::pg_catalog.oid`,
		l.table).Scan(&persistence, &kind, &rules, &rowSecurity, &triggers, &code, &hasCeiling); err != nil {
		return l.wrap("reading the lease table", err)
	}
	// A temporary table is one table per connection: every connection
	// would grant every SID.
	if persistence == "t" {
		return fmt.Errorf("%w: the lease table %s is a temporary table: "+
			"each connection would grant the same SIDs; name a permanent table with WithTable(schema, name)", ErrInvalidOption, l.table)
	}
	switch {
	case kind != "r":
		return fmt.Errorf("%w: %s is not an ordinary table (relkind %q): name another with WithTable(schema, name)", ErrLeaseTable, l.table, kind)
	case triggers != "":
		return fmt.Errorf("%w: %s has triggers (%s), which would run as every holder; drop them or name another table with WithTable",
			ErrLeaseTable, l.table, clip(triggers))
	case rules:
		return fmt.Errorf("%w: %s has rules, which would run as every holder; drop them or name another table with WithTable", ErrLeaseTable, l.table)
	case rowSecurity:
		return fmt.Errorf("%w: %s has row level security enabled, whose policies would run as every holder; "+
			"disable it or name another table with WithTable", ErrLeaseTable, l.table)
	case code != 0:
		return fmt.Errorf("%w: %s calls functions, operators or types that are not built in (in its defaults, constraints, indexes or column types), "+
			"which would run as every holder; create it as the lease does (the statement is in docs/deployments.md) or name another table with WithTable",
			ErrLeaseTable, l.table)
	}
	// minted_below came with the clock check: add it to a table made before.
	if !hasCeiling {
		alter := `ALTER TABLE ` + l.table + ` ADD COLUMN IF NOT EXISTS minted_below bigint NOT NULL DEFAULT 0`
		if _, err := l.db.exec(ctx, `SELECT pg_catalog.pg_advisory_xact_lock(7373474917); `+alter); err != nil {
			return l.wrap(fmt.Sprintf("adding a column to the lease table (a role that may not alter it needs it run once:\n%s)", alter), err)
		}
	}
	// Every column is given: no default is evaluated.
	if _, err := l.db.exec(ctx, `INSERT INTO `+l.table+` (namespace, sid, token, holder, acquired_at, expires_at, minted_below)
		SELECT $1::pg_catalog.text, g, 0, NULL, NULL, '-infinity'::pg_catalog.timestamptz, 0 FROM pg_catalog.generate_series(0, 31) g
		ON CONFLICT (namespace, sid) DO NOTHING`, l.namespace); err != nil {
		return l.wrap("adding the namespace's rows", err)
	}
	return nil
}

// singleWriter returns ErrMultiWriter when the database subscribes to
// another node: then another writable node may grant the same SIDs, from
// the same table replicated or from its own.
func (l *Lease) singleWriter(ctx context.Context) error {
	var subs string
	err := l.db.queryRow(ctx, `SELECT coalesce(pg_catalog.string_agg(subname::pg_catalog.text, ', '::pg_catalog.text), '')
		FROM pg_catalog.pg_subscription
		WHERE subdbid OPERATOR(pg_catalog.=) (SELECT oid FROM pg_catalog.pg_database
			WHERE datname OPERATOR(pg_catalog.=) pg_catalog.current_database())`).Scan(&subs)
	if err != nil {
		return l.wrap("looking for subscriptions", err)
	}
	if subs != "" {
		return fmt.Errorf("%w: the database subscribes to another node (subscription %s), which may grant the same SIDs: "+
			"give each node's writers SIDs of their own (ulid_flake_scalable() with ulid_flake_set_sid per node), or use stand-alone IDs; "+
			"see docs/deployments.md", ErrMultiWriter, subs)
	}
	return nil
}

// newToken draws a fencing token: 63 random bits, never 0 (a fresh row's).
func newToken() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return max(int64(binary.BigEndian.Uint64(b[:])>>1), 1)
}

// errClaimExpired: the claim expired, or was taken, before the claimant
// proved it (a pause longer than its expiry, 2V + MaxClockAhead, between
// the claim and the proof: a busy machine, a stopped process). Nothing was
// minted under it, so claiming again is safe.
var errClaimExpired = errors.New("the claim expired before it was proven (a pause longer than 2V + MaxClockAhead)")

// claimTries is how many claims Acquire makes while each expires before
// it is proven.
const claimTries = 5

// takeRetrying is take, tried again while a claim expires before it is
// proven.
func (l *Lease) takeRetrying(ctx context.Context) error {
	for try := 1; ; try++ {
		err := l.take(ctx)
		if !errors.Is(err, errClaimExpired) || try == claimTries {
			return err
		}
		l.opts.log.Warn("sidlease: a claim expired before it was proven; claiming again",
			"namespace", l.namespace, "try", try, "error", err)
	}
}

// claim claims a free SID, waits out V and the SID's floor, and proves it
// still holds it before it makes the lease valid.
func (l *Lease) claim(ctx context.Context) error {
	if err := l.singleWriter(ctx); err != nil {
		return err
	}
	token := newToken()
	var sid int
	var minted, now int64
	err := l.db.queryRow(ctx, `UPDATE `+l.table+` t
		SET token = $4, holder = $2, acquired_at = pg_catalog.now(), expires_at = `+after("$3")+`
		FROM (SELECT sid FROM `+l.table+` WHERE namespace OPERATOR(pg_catalog.=) $1::pg_catalog.text
			AND expires_at OPERATOR(pg_catalog.<) pg_catalog.now()
			ORDER BY pg_catalog.random() LIMIT 1 FOR UPDATE SKIP LOCKED) free
		WHERE t.namespace OPERATOR(pg_catalog.=) $1::pg_catalog.text AND t.sid OPERATOR(pg_catalog.=) free.sid
		RETURNING t.sid, t.minted_below, `+serverMs, l.namespace, l.holder, (2*l.opts.validity+MaxClockAhead).Microseconds(), token).Scan(&sid, &minted, &now)
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w in namespace %q: all %d are held (see %s)", ErrNoFreeSID, l.namespace, flake.MaxSID+1, l.table)
	}
	if err != nil {
		return l.wrap("claiming a SID", err)
	}
	gen, err := newGenerator(l.opts.genOpts, sid)
	if err != nil {
		l.releaseLogged(sid, token)
		return err
	}
	floor := max(flake.ID(minted), gen.Epoch().MinID(time.UnixMilli(now).Add(l.margin())))
	if err := wait(ctx, l.opts.validity, nil); err != nil {
		l.releaseLogged(sid, token)
		return err
	}
	if err := l.waitAbove(ctx, gen, floor, sid, token); err != nil {
		l.releaseLogged(sid, token)
		return err
	}
	// The clock is past the floor now, but a new generator has made no ID
	// to stay above when the clock steps back before its first: the lease
	// keeps the floor and refuses IDs at or below it.
	l.raiseFloor(floor - 1)
	return l.prove(ctx, sid, token, gen)
}

// prove makes the claimed SID the lease's and renews it: the lease is held
// from then on. When it cannot be held, the SID is freed before prove
// returns.
func (l *Lease) prove(ctx context.Context, sid int, token int64, gen *flake.Generator) error {
	l.mu.Lock()
	l.sid, l.token, l.gen = sid, token, gen
	l.mu.Unlock()
	ok, err := l.renew(ctx)
	if err != nil {
		l.releaseLogged(sid, token) // the claim may still be there
		return fmt.Errorf("%w while acquiring SID %d of namespace %q: %w", ErrLeaseLost, sid, l.namespace, unprefixed{err})
	}
	if !ok {
		return fmt.Errorf("%w while acquiring SID %d of namespace %q: %w", ErrLeaseLost, sid, l.namespace, errClaimExpired)
	}
	l.mu.Lock()
	switch {
	case l.ahead > MaxClockAhead:
		l.validUntil = time.Time{}
		err = l.aheadError(l.ahead)
	case l.closed:
		err = ErrClosed
	}
	l.mu.Unlock()
	if err != nil {
		l.releaseLogged(sid, token)
	}
	return err
}

// margin is how far ahead of the server's clock a holder's IDs may go
// until its next renewal: V, plus MaxClockAhead, plus the millisecond in
// progress.
func (l *Lease) margin() time.Duration {
	return l.opts.validity + MaxClockAhead + time.Millisecond
}

// waitAbove waits until gen's next IDs are at least floor: at most
// MaxClockWait, else ErrFloorAhead. The claim's expiry covers a wait of
// MaxClockAhead; a longer one extends it first.
func (l *Lease) waitAbove(ctx context.Context, gen *flake.Generator, floor flake.ID, sid int, token int64) error {
	for {
		behind := gen.Epoch().Time(floor).Sub(latest(gen))
		if behind <= 0 {
			return nil
		}
		if behind > MaxClockWait {
			return fmt.Errorf("%w: SID %d of namespace %q: its floor (the higher of its last holder's ceiling, minted_below, "+
				"and the server's clock plus V plus %s) is %s, %s ahead of this clock (at most %s is waited out); "+
				"if the wrong clock was the last holder's and no ID it made is kept, set minted_below = 0 in the lease table's row",
				ErrFloorAhead, sid, l.namespace, MaxClockAhead, timeOf(gen, floor), behind, MaxClockWait)
		}
		if behind > MaxClockAhead {
			if err := l.extend(ctx, sid, token, behind+2*l.opts.validity); err != nil {
				return err
			}
		}
		if err := wait(ctx, behind, nil); err != nil {
			return err
		}
	}
}

// extend keeps a claim that waits for its floor from expiring for d.
func (l *Lease) extend(ctx context.Context, sid int, token int64, d time.Duration) error {
	n, err := l.db.exec(ctx, `UPDATE `+l.table+` SET expires_at = `+after("$4")+`
		WHERE `+heldBy, l.namespace, sid, token, d.Microseconds())
	if err != nil {
		return l.wrap(fmt.Sprintf("extending the claim on SID %d", sid), err)
	}
	if n != 1 {
		return fmt.Errorf("%w: SID %d of namespace %q: the claim was taken while it waited for its clock", ErrLeaseLost, sid, l.namespace)
	}
	return nil
}

// renew proves that the lease's token still holds its SID, extends the
// expiry, reads the server's clock, and records the ceiling of the IDs the
// holder may make until it must renew again. It reports false when the
// server's row does not carry the token (taken, or the claim was lost).
func (l *Lease) renew(ctx context.Context) (bool, error) {
	l.mu.Lock()
	sid, token, gen := l.sid, l.token, l.gen
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 4*l.opts.validity)
	defer cancel()
	sent := time.Now()
	ceiling := gen.Ceiling(l.opts.validity)
	clock := latest(gen)
	var now, minted, inUse int64
	err := l.db.queryRow(ctx, `UPDATE `+l.table+` SET expires_at = `+after("$4")+`,
		minted_below = CASE WHEN $5::bigint OPERATOR(pg_catalog.<=) (`+serverMs+` OPERATOR(pg_catalog.+) $6::bigint)
			THEN greatest(minted_below, $7::bigint) ELSE minted_below END
		WHERE `+heldBy+` AND expires_at OPERATOR(pg_catalog.>) pg_catalog.now()
		RETURNING `+serverMs+`, minted_below, `+l.inUse(), l.namespace, sid, token, l.opts.validity.Microseconds(),
		gen.Epoch().Time(ceiling).UnixMilli(), l.margin().Milliseconds(), int64(ceiling)).Scan(&now, &minted, &inUse)
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.token == token {
			l.validUntil = time.Time{}
		}
		return false, nil
	}
	if err != nil {
		err = l.wrap("heartbeat", err)
		if !errors.Is(err, context.Canceled) { // not Close's
			l.observeRenew(sid, 0, 0, err)
		}
		return false, err
	}
	ahead := clock.Sub(time.UnixMilli(now))
	if !l.renewed(token, sent.Add(l.opts.validity), min(ceiling, flake.ID(minted)), ahead) {
		return false, nil
	}
	l.observeRenew(sid, ahead, inUse, nil)
	return true, nil
}

// renewed records a renewal of token's claim, unless the lease has made
// another claim since: valid until, the ceiling, the clock's lead.
func (l *Lease) renewed(token int64, validUntil time.Time, ceiling flake.ID, ahead time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.token != token {
		return false
	}
	l.validUntil, l.ceiling = validUntil, ceiling
	l.ahead, l.cause = ahead, nil
	if l.readyOpen {
		close(l.ready)
		l.readyOpen = false
	}
	return true
}

// release frees a SID at once, if the token still holds it.
func (l *Lease) release(sid int, token int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := l.db.exec(ctx, `UPDATE `+l.table+` SET expires_at = '-infinity', holder = NULL
		WHERE `+heldBy, l.namespace, sid, token)
	if err != nil {
		return l.wrap("releasing the SID", err)
	}
	return nil
}

func (l *Lease) releaseLogged(sid int, token int64) {
	if err := l.release(sid, token); err != nil {
		l.opts.log.Warn("sidlease: releasing a SID failed; it is free again when its row expires",
			"namespace", l.namespace, "sid", sid, "error", err)
	}
}

// run keeps the lease: a heartbeat every V/4 while it holds its SID, and a
// claim every V/4 once the SID was proven lost, until one succeeds.
func (l *Lease) run() {
	defer close(l.done)
	tick := time.NewTicker(l.opts.validity / 4)
	defer tick.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-l.stop
		cancel()
	}()
	held := true
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		if held {
			held = l.heartbeat(ctx)
			continue
		}
		err := l.take(ctx)
		if ctx.Err() != nil {
			return
		}
		held = l.retook(err)
	}
}

// heartbeat renews the lease and reports whether it still holds its SID:
// a failed heartbeat does not say it lost it, and the next one may restore
// the validity.
func (l *Lease) heartbeat(ctx context.Context) bool {
	l.mu.Lock()
	sid, wasAhead := l.sid, l.ahead > MaxClockAhead
	l.mu.Unlock()
	ok, err := l.renew(ctx)
	switch {
	case err != nil:
		l.mu.Lock()
		l.cause = err
		l.mu.Unlock()
		l.opts.log.Warn("sidlease: heartbeat failed; minting stops when the validity runs out",
			"namespace", l.namespace, "sid", sid, "error", err)
		return true
	case !ok:
		l.mu.Lock()
		l.cause = errors.New("the server's row no longer carries this lease's token")
		l.mu.Unlock()
		l.opts.log.Warn("sidlease: SID lost (taken, or the claim was lost in a failover); minting stopped, claiming a SID again",
			"namespace", l.namespace, "sid", sid)
		l.observeLoss(sid)
		return false
	}
	l.mu.Lock()
	ahead := l.ahead
	l.mu.Unlock()
	if now := ahead > MaxClockAhead; now != wasAhead {
		l.opts.log.Warn("sidlease: clock ahead of the server's; minting only while it is within the limit",
			"namespace", l.namespace, "sid", sid, "ahead", ahead, "limit", MaxClockAhead, "minting", !now)
	}
	return true
}

// retook records the outcome of a claim made after the SID was lost.
func (l *Lease) retook(err error) bool {
	if err != nil {
		l.mu.Lock()
		l.cause = err
		l.mu.Unlock()
		l.opts.log.Error("sidlease: claiming a SID failed; trying again", "namespace", l.namespace, "error", err)
		return false
	}
	l.opts.log.Info("sidlease: holding a SID again", "namespace", l.namespace, "sid", l.SID())
	return true
}
