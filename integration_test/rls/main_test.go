// Package rls_test tests Ulid-Flake keys under row-level security on real
// PostgreSQL, as docs/integrations.md ("Row-level security") describes
// them: DEFAULT ulid_flake() and Go-made IDs under a tenant policy, COPY's
// refusal and the way around it, and a policy that decodes a tenant's
// prefixed ID from a setting a pooled connection left empty.
package rls_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template migrated to the
// latest version.
func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }
