// Package leasefail_test tests package sidlease on real PostgreSQL when
// things go wrong: failovers that lose writes, partitions, wild and skewed
// clocks. (It is apart from lease_test to keep each test binary well
// under go test's 10-minute timeout on a busy machine.)
package leasefail_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// TestMain builds every test database from a template migrated to the
// latest version.
// Its tests use little CPU (they sleep through leases' validity): the
// whole suite runs them two per CPU too.
func TestMain(m *testing.M) {
	pgtest.LightOnCPU()
	pgtest.Main(m, pgtest.Migrated)
}

const testValidity = itest.LeaseValidity
