package blocks_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/ulidflake/ulidflake/blocks"
)

// refusedErr is what pgx says of every connection to 127.0.0.1:1, where
// nothing listens.
const refusedErr = "failed to connect to `user=nobody database=none`: 127.0.0.1:1 (127.0.0.1): " +
	"dial error: dial tcp 127.0.0.1:1: connect: connection refused"

// TestUnavailableMessage: the error of a wait that ends names the
// source's own WithTimeout or the caller's context, whichever ended it,
// and the last reservation's error, or that a reservation is still
// running with no answer.
func TestUnavailableMessage(t *testing.T) {
	refused, err := sql.Open("pgx", "postgres://nobody@127.0.0.1:1/none?connect_timeout=2&sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	silent, err := sql.Open("pgx", "postgres://nobody@"+ln.Addr().String()+"/none?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	for _, c := range []struct {
		db              *sql.DB
		timeout, caller time.Duration
		want            string
	}{
		{refused, 300 * time.Millisecond, time.Minute, "blocks: no block of IDs from the database within WithTimeout(300ms): " +
			"context deadline exceeded (last reservation: " + refusedErr + ")"},
		{refused, time.Minute, 300 * time.Millisecond, "blocks: no block of IDs from the database before the caller's context ended: " +
			"context deadline exceeded (last reservation: " + refusedErr + ")"},
		{silent, time.Minute, 300 * time.Millisecond, "blocks: no block of IDs from the database before the caller's context ended: " +
			"context deadline exceeded (a reservation is running, with no answer yet)"},
	} {
		src, err := blocks.NewSource(c.db, blocks.WithTimeout(c.timeout))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.caller)
		_, err = src.NewWait(ctx)
		cancel()
		src.Close()
		if !errors.Is(err, blocks.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) || err.Error() != c.want {
			t.Errorf("got  %v\nwant %s", err, c.want)
		}
	}
}
