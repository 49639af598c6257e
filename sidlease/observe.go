package sidlease

import (
	"context"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

// inNamespace is the observer of WithObserver, which gives every event
// the lease's namespace, its generator's too.
type inNamespace struct {
	o         flake.Observer
	namespace string
}

func (n inNamespace) Observe(e flake.Event) {
	e.Namespace = n.namespace
	n.o.Observe(e)
}

// observe reports an event of the lease, if it has an observer.
func (l *Lease) observe(e flake.Event) {
	if l.opts.obs != nil {
		l.opts.obs.Observe(e)
	}
}

// take claims a SID, as claim does, and reports the claim: its SID (-1
// if it failed) and the time from the claim to minting; not a claim cut
// short by its context (Close, or Acquire's caller).
func (l *Lease) take(ctx context.Context) error {
	start := time.Now()
	err := l.claim(ctx)
	if l.opts.obs != nil && ctx.Err() == nil {
		sid := -1
		if err == nil {
			sid = l.SID()
		}
		l.observe(flake.Event{Kind: flake.EventLeaseClaim, SID: sid, Duration: time.Since(start), Err: err})
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
