package pgtest

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// Command runs cmd in the server's container (pg_dump, psql, pg_restore:
// the client programs of the server's own release) and returns what it
// wrote, stdout and stderr together. It returns an error when cmd exits
// with a status other than 0, or when the server is not a container
// (ULIDFLAKE_TEST_DATABASE_URL): callers skip then.
func (s *Server) Command(ctx context.Context, cmd ...string) (string, error) {
	if s.ctr == nil {
		return "", fmt.Errorf("pgtest: %s is not a container (%s is set): it runs no commands", s.Name, EnvURL)
	}
	code, r, err := s.ctr.Exec(ctx, cmd, tcexec.Multiplexed())
	if err != nil {
		return "", fmt.Errorf("pgtest: running %s in %s: %w", cmd[0], s.Name, err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return string(out), fmt.Errorf("pgtest: reading the output of %s in %s: %w", cmd[0], s.Name, err)
	}
	if code != 0 {
		return string(out), fmt.Errorf("pgtest: %s in %s exited with status %d:\n%s",
			strings.Join(cmd, " "), s.Name, code, lastLines(string(out), 30))
	}
	return string(out), nil
}

// InContainer reports whether the server runs in a container, where
// [Server.Command] runs commands.
func (s *Server) InContainer() bool { return s.ctr != nil }

// LocalURL is the URL of database name as programs inside the server's
// container reach it (127.0.0.1:5432), with the harness's own role.
func (s *Server) LocalURL(name string) string {
	p, err := url.Parse(s.URL)
	if err != nil {
		return s.URL
	}
	p.Host = "127.0.0.1:5432"
	p.Path = "/" + name
	return p.String()
}
