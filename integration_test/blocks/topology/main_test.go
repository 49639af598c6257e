// Package topology_test tests package blocks across a failover that loses
// writes, on servers of its own in a Docker network (internal/pgtest's
// Cluster). It takes minutes, so it has a test binary of its own.
package topology_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m, nil) }
