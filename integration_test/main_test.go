// Package integration_test runs ulidflake end to end against real
// PostgreSQL servers; see internal/pgtest for how the servers are chosen.
package integration_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m, nil) }
