package flake

import "context"

// Source is anything that makes IDs: a [*Generator], a *sidlease.Lease
// (IDs of a Generator under a SID that PostgreSQL holds), or a
// *blocks.Source (IDs from blocks that PostgreSQL reserves). Packages that
// need IDs, such as gormplugin, take a Source.
type Source interface {
	// NewWait returns a new ID, waiting when the source must (a full
	// millisecond, a block in flight), until ctx is done.
	NewWait(ctx context.Context) (ID, error)
}

var _ Source = (*Generator)(nil)
