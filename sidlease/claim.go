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

// ddl creates the lease table.
func (l *Lease) ddl() string {
	return `CREATE TABLE IF NOT EXISTS ` + l.table + ` (
	namespace    pg_catalog.text NOT NULL,
	sid          int         NOT NULL CHECK (sid OPERATOR(pg_catalog.>=) 0 AND sid OPERATOR(pg_catalog.<=) 31),
	token        bigint      NOT NULL DEFAULT 0,
	holder       pg_catalog.text,
	acquired_at  pg_catalog.timestamptz,
	expires_at   pg_catalog.timestamptz NOT NULL DEFAULT '-infinity',
	minted_below bigint      NOT NULL DEFAULT 0,
	PRIMARY KEY (namespace, sid))`
}

// grant gives this role what the lease's statements need.
func (l *Lease) grant() string {
	return `GRANT USAGE ON SCHEMA ` + pgx.Identifier{l.opts.schema}.Sanitize() + ` TO ` + l.role +
		";\nGRANT SELECT, INSERT, UPDATE ON " + l.table + ` TO ` + l.role
}

// tableState is what setup reads of the lease table and its schema; role
// names are quoted where they need it.
type tableState struct {
	owner        string // the schema's; "": no schema
	creators     string // the other roles that may CREATE in the schema
	foreignOwner string // the table's, when it lacks the privileges of the schema's owner
	elsewhere    string // the schema of another table the name alone finds
	changers     string // other roles that may change the table (TRIGGER, TRUNCATE, REFERENCES, MAINTAIN)
	triggers     string // the table's triggers: code that would run as every holder
	exists, mine bool   // mine: this role has the privileges of the schema's owner
}

// setup checks the lease table and its schema, creates the table if it is
// missing and this role owns the schema (no lock: instances that race on
// the catalog fail, and find the table then), and adds the namespace's 32
// rows. See the package documentation, "The lease table".
func (l *Lease) setup(ctx context.Context) error {
	t, err := l.inspect(ctx)
	if err == nil {
		err = l.trust(t)
	}
	if err == nil && !t.exists {
		if _, err = l.db.exec(ctx, l.ddl()); err != nil {
			if t, again := l.inspect(ctx); again == nil && t.exists {
				err = nil
			} else {
				err = l.wrap("creating the lease table", err)
			}
		}
		if err == nil { // default privileges may have granted others rights on it
			if t, err = l.inspect(ctx); err == nil {
				err = l.trust(t)
			}
		}
	}
	if err != nil {
		return err
	}
	// Every column is given: no default is evaluated.
	if _, err := l.db.exec(ctx, `INSERT INTO `+l.table+` (namespace, sid, token, holder, acquired_at, expires_at, minted_below)
		SELECT $1::pg_catalog.text, g, 0, NULL, NULL, '-infinity'::pg_catalog.timestamptz, 0 FROM pg_catalog.generate_series(0, 31) g
		ON CONFLICT (namespace, sid) DO NOTHING`, l.namespace); err != nil {
		return l.wrap("adding the namespace's rows", err)
	}
	return nil
}

// inspect reads the lease table and its schema, and this role. Without
// WithSchema, it also looks the bare name up on the search_path.
func (l *Lease) inspect(ctx context.Context) (tableState, error) {
	var t tableState
	var role string
	var bare any // NULL: to_regclass('') is an error before PostgreSQL 16
	if !l.opts.named {
		bare = pgx.Identifier{tableName}.Sanitize()
	}
	err := l.db.queryRow(ctx, `SELECT CURRENT_USER::pg_catalog.text, coalesce(n.nspowner::pg_catalog.regrole::pg_catalog.text, ''),
		coalesce((SELECT pg_catalog.string_agg(CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0::pg_catalog.oid THEN 'PUBLIC'::pg_catalog.text
				ELSE a.grantee::pg_catalog.regrole::pg_catalog.text END, ', '::pg_catalog.text)
			FROM pg_catalog.aclexplode(coalesce(n.nspacl, pg_catalog.acldefault('n'::pg_catalog."char", n.nspowner))) a
			WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'::pg_catalog.text AND (a.grantee OPERATOR(pg_catalog.=) 0::pg_catalog.oid
				OR NOT pg_catalog.pg_has_role(a.grantee, n.nspowner, 'USAGE'::pg_catalog.text))), ''),
		coalesce(CASE WHEN NOT pg_catalog.pg_has_role(c.relowner, n.nspowner, 'USAGE'::pg_catalog.text)
			THEN c.relowner::pg_catalog.regrole::pg_catalog.text END, ''),
		coalesce((SELECT fn.nspname::pg_catalog.text FROM pg_catalog.pg_class fc
			JOIN pg_catalog.pg_namespace fn ON fn.oid OPERATOR(pg_catalog.=) fc.relnamespace
			WHERE fc.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass($2::pg_catalog.text)::pg_catalog.oid
			AND (c.oid IS NULL OR fc.oid OPERATOR(pg_catalog.<>) c.oid)), ''),
		coalesce((SELECT pg_catalog.string_agg(DISTINCT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0::pg_catalog.oid THEN 'PUBLIC'::pg_catalog.text
				ELSE a.grantee::pg_catalog.regrole::pg_catalog.text END, ', '::pg_catalog.text)
			FROM pg_catalog.aclexplode(c.relacl) a
			WHERE a.privilege_type OPERATOR(pg_catalog.=) ANY ('{TRIGGER,TRUNCATE,REFERENCES,MAINTAIN}'::pg_catalog.text[])
				AND (a.grantee OPERATOR(pg_catalog.=) 0::pg_catalog.oid OR NOT pg_catalog.pg_has_role(a.grantee, n.nspowner, 'USAGE'::pg_catalog.text))), ''),
		coalesce((SELECT pg_catalog.string_agg(tg.tgname::pg_catalog.text, ', '::pg_catalog.text) FROM pg_catalog.pg_trigger tg
			WHERE tg.tgrelid OPERATOR(pg_catalog.=) c.oid AND NOT tg.tgisinternal), ''),
		c.oid IS NOT NULL, coalesce(pg_catalog.pg_has_role(n.nspowner, 'USAGE'::pg_catalog.text), false)
		FROM (SELECT 1) one
		LEFT JOIN pg_catalog.pg_namespace n ON n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.name
		LEFT JOIN pg_catalog.pg_class c ON c.relnamespace OPERATOR(pg_catalog.=) n.oid
			AND c.relname OPERATOR(pg_catalog.=) '`+tableName+`'::pg_catalog.name`,
		l.opts.schema, bare).Scan(&role, &t.owner, &t.creators, &t.foreignOwner, &t.elsewhere, &t.changers, &t.triggers, &t.exists, &t.mine)
	if err != nil {
		return t, l.wrap("reading the lease table's schema", err)
	}
	l.role = pgx.Identifier{role}.Sanitize()
	return t, nil
}

// trust refuses what the install's rule refuses (the schema is its
// owner's alone, and so is the table), and a table the bare name finds
// elsewhere for this role, where 0.1.0 kept its leases.
func (l *Lease) trust(t tableState) error {
	schema := pgx.Identifier{l.opts.schema}.Sanitize()
	switch {
	case t.elsewhere != "":
		return fmt.Errorf("%w: the lease table is %s for every role, but for role %s %s is %s, which 0.1.0 used: "+
			"instances using both would hold the same SIDs. Name its schema for every instance, WithSchema(%q), or stop them all "+
			"and move its rows to %s (docs/deployments.md, \"The lease table\")",
			ErrLeaseTable, l.table, l.role, tableName, pgx.Identifier{t.elsewhere, tableName}.Sanitize(), t.elsewhere, l.table)
	case t.owner == "":
		return fmt.Errorf("%w: schema %s does not exist: CREATE SCHEMA %s as the role to own the lease table", ErrLeaseTable, schema, schema)
	case t.creators != "":
		return fmt.Errorf("%w: roles other than its owner (%s) may create objects in schema %s, the lease table among them, "+
			"with code that runs as every holder: REVOKE CREATE ON SCHEMA %s FROM %s; or use a schema of its own for every instance: "+
			"CREATE SCHEMA ulid_flake and WithSchema(\"ulid_flake\")", ErrLeaseTable, t.owner, schema, schema, clip(t.creators))
	case t.exists && t.foreignOwner != "":
		return fmt.Errorf("%w: %s is owned by %s, not by the owner of its schema (%s), whom alone the lease trusts: drop it, "+
			"or give it to that owner once checked", ErrLeaseTable, l.table, t.foreignOwner, t.owner)
	case t.changers != "":
		return fmt.Errorf("%w: roles other than the owner of its schema (%s) may change %s (triggers, TRUNCATE: code or "+
			"changes that every holder would run into), granted to them, or by ALTER DEFAULT PRIVILEGES when it was created: "+
			"REVOKE TRIGGER, TRUNCATE, REFERENCES ON %s FROM %s (and MAINTAIN, from PostgreSQL 17)",
			ErrLeaseTable, t.owner, l.table, l.table, clip(t.changers))
	case t.triggers != "":
		return fmt.Errorf("%w: %s has triggers (%s), which would run as every holder: the lease needs none; drop them",
			ErrLeaseTable, l.table, clip(t.triggers))
	case !t.exists && !t.mine:
		return fmt.Errorf("%w: %s does not exist, and only the owner of its schema (%s) may create it. Run once as that owner:\n%s;\n%s;\n"+
			"or name, for every instance, a schema of role %s: WithSchema(name)", ErrLeaseTable, l.table, t.owner, l.ddl(), l.grant(), l.role)
	}
	return nil
}

// singleWriter returns ErrMesh when the database subscribes to
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
			"see docs/deployments.md", ErrMesh, subs)
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
// the claim and the proof: a busy machine, a stopped process). No ID was
// made under it, so claiming again is safe.
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
// from then on. When it cannot be held, the SID is released before prove
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
// MaxClockWait, else ErrClockBehindFloor. The claim's expiry covers a
// wait of MaxClockAhead; a longer one extends it first.
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
				ErrClockBehindFloor, sid, l.namespace, MaxClockAhead, timeOf(gen, floor), behind, MaxClockWait)
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
		err = l.wrap("renewing the lease", err)
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

// release gives a SID back at once (it is free), if the token still
// holds it.
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

// run keeps the lease: a renewal every V/4 while it holds its SID, and a
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
			held = l.renewHeld(ctx)
			continue
		}
		err := l.take(ctx)
		if ctx.Err() != nil {
			return
		}
		held = l.retook(err)
	}
}

// renewHeld renews the lease and reports whether it still holds its SID:
// a failed renewal does not say it lost it, and the next one may restore
// the validity.
func (l *Lease) renewHeld(ctx context.Context) bool {
	l.mu.Lock()
	sid, wasAhead := l.sid, l.ahead > MaxClockAhead
	l.mu.Unlock()
	ok, err := l.renew(ctx)
	switch {
	case err != nil:
		l.mu.Lock()
		l.cause = err
		l.mu.Unlock()
		l.opts.log.Warn("sidlease: renewal failed; making IDs stops when the validity runs out",
			"namespace", l.namespace, "sid", sid, "error", err)
		return true
	case !ok:
		l.mu.Lock()
		l.cause = errors.New("the server's row no longer carries this lease's token")
		l.mu.Unlock()
		l.opts.log.Warn("sidlease: SID lost (taken, or the claim was lost in a failover); making IDs stopped, claiming a SID again",
			"namespace", l.namespace, "sid", sid)
		l.observeLoss(sid)
		return false
	}
	l.mu.Lock()
	ahead := l.ahead
	l.mu.Unlock()
	if now := ahead > MaxClockAhead; now != wasAhead {
		l.opts.log.Warn("sidlease: clock ahead of the server's; making IDs only while it is within the limit",
			"namespace", l.namespace, "sid", sid, "ahead", ahead, "limit", MaxClockAhead, "making_ids", !now)
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
