package sidlease

import (
	"context"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

// Observer receives a lease's events ([WithObserver]), each with the
// lease's namespace, for metrics (docs/observability.md): its claims,
// renewals and losses, and its generator's events. The OpenTelemetry
// adapter, github.com/ulidflake/ulidflake/otelulidflake, is one, and also a
// flake.Observer and a blocks.Observer: one value for every source. The
// methods take only the standard library's types and package flake's, so
// that an adapter implements them without importing this package (and
// pgx).
//
// They are called synchronously, from the goroutine that met the event
// (a renewal's, a caller's), possibly from many at once: they must be
// safe for concurrent use, return quickly, and not call back into the
// lease.
type Observer interface {
	// ObserveLeaseClaim: the lease claimed the SID sid and waited until
	// it may make IDs, wait in all from the claim; or the claim failed (err
	// says why, sid is -1). A claim cut short by its context (Close, or
	// Acquire's caller) is not reported.
	ObserveLeaseClaim(namespace string, sid int, wait time.Duration, err error)
	// ObserveLeaseRenew: a renewal ran. skew: this instance's clock
	// minus the server's; inUse: the namespace's SIDs in use (unexpired
	// rows, this one included). When it failed, err says why (the lease
	// may still hold the SID), and skew and inUse are 0.
	ObserveLeaseRenew(namespace string, sid int, skew time.Duration, inUse int64, err error)
	// ObserveLeaseLoss: the lease found that it no longer holds sid
	// (taken over, or its claim lost in a failover); it stopped making IDs
	// and claims a SID again.
	ObserveLeaseLoss(namespace string, sid int)
	// ObserveGenerator: an event of the lease's generator (see
	// flake.EventKind), its SID the lease's; the lease's own NewWait
	// reports its waits for a used-up millisecond as
	// flake.EventOverflowWait.
	ObserveGenerator(namespace string, e flake.Event)
}

// inNamespace is the observer of WithObserver, which is also its
// generator's (a flake.Observer), with the lease's namespace.
type inNamespace struct {
	Observer
	namespace string
}

func (n inNamespace) Observe(e flake.Event) { n.ObserveGenerator(n.namespace, e) }

// observeGenerator reports an event of the lease's generator, if the lease
// has an observer.
func (l *Lease) observeGenerator(e flake.Event) {
	if l.opts.obs != nil {
		l.opts.obs.ObserveGenerator(l.namespace, e)
	}
}

// observeRenew reports a renewal of sid, if the lease has an observer.
func (l *Lease) observeRenew(sid int, skew time.Duration, inUse int64, err error) {
	if l.opts.obs != nil {
		l.opts.obs.ObserveLeaseRenew(l.namespace, sid, skew, inUse, err)
	}
}

// observeLoss reports the loss of sid, if the lease has an observer.
func (l *Lease) observeLoss(sid int) {
	if l.opts.obs != nil {
		l.opts.obs.ObserveLeaseLoss(l.namespace, sid)
	}
}

// take claims a SID, as claim does, and reports the claim: its SID (-1
// if it failed) and the time from the claim until it may make IDs; not a
// claim cut short by its context (Close, or Acquire's caller).
func (l *Lease) take(ctx context.Context) error {
	start := time.Now()
	err := l.claim(ctx)
	if l.opts.obs != nil && ctx.Err() == nil {
		sid := -1
		if err == nil {
			sid = l.SID()
		}
		l.opts.obs.ObserveLeaseClaim(l.namespace, sid, time.Since(start), err)
	}
	return err
}

// inUse is the expression, in a renewal's RETURNING, of the namespace's
// SIDs in use: counted only for an observer.
func (l *Lease) inUse() string {
	if l.opts.obs == nil {
		return "0::bigint"
	}
	return `(SELECT pg_catalog.count(*) FROM ` + l.table + ` WHERE namespace OPERATOR(pg_catalog.=) $1::pg_catalog.text
		AND expires_at OPERATOR(pg_catalog.>) pg_catalog.now())`
}
