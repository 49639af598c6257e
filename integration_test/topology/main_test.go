// Package topology_test runs the tests that start servers of their own in a
// Docker network: a primary and an asynchronous streaming replica promoted
// after it lost writes, two nodes writing to each other through logical
// replication, and a mesh that refuses a SID given twice and a promoted
// clone of one of its nodes, then writes on three nodes. They take minutes,
// so they have a test binary (and a go test timeout) of their own; see
// internal/pgtest's Cluster.
package topology_test

import (
	"testing"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m, nil) }
