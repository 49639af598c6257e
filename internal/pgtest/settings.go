package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// extraSettings are the settings that [Settings] adds to the servers.
var extraSettings []string

// Settings adds server settings (name=value, as postgres -c takes them) to
// every server this test binary starts; call it in TestMain before [Main]
// or [MainExtension]. Logical replication between a server's databases
// needs wal_level=logical, say. A server of ULIDFLAKE_TEST_DATABASE_URL
// keeps its own settings: tests that need one check it.
func Settings(settings ...string) {
	extraSettings = append(extraSettings, settings...)
}

// ConnInfo returns a libpq connection string (host, port, user, password,
// dbname) for database db on the server, as user (the harness's superuser
// when user is ""; password is then ignored), by the container's address
// on Docker's network: programs that [Server.Command] runs in this
// server's container or in another server's container of this test binary
// (they share Docker's default network) reach it there, and so do the
// server's own subscriptions (CREATE SUBSCRIPTION ... CONNECTION). Running
// the newer release's pg_dump against an older server is the use.
func (s *Server) ConnInfo(ctx context.Context, db, user, password string) (string, error) {
	if s.ctr == nil {
		return "", fmt.Errorf("pgtest: %s is not a container (%s is set)", s.Name, EnvURL)
	}
	ip, err := s.ctr.ContainerIP(ctx)
	if err != nil {
		return "", fmt.Errorf("pgtest: the address of %s: %w", s.Name, err)
	}
	if ip == "" {
		return "", errors.New("pgtest: " + s.Name + "'s container has no address on a single network")
	}
	if user == "" {
		u, err := url.Parse(s.URL)
		if err != nil {
			return "", err
		}
		user = u.User.Username()
		password, _ = u.User.Password()
	}
	return fmt.Sprintf("host=%s port=5432 user=%s password=%s dbname=%s", ip, connValue(user), connValue(password), connValue(db)), nil
}

// connValue quotes a libpq connection string value.
func connValue(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}
