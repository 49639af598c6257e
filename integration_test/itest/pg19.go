package itest

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// StandardStringsOnly reports whether s refuses standard_conforming_strings
// = off, as PostgreSQL 19 does: SET, ALTER DATABASE … SET and a
// connection's startup parameter fail with SQLSTATE 0A000 ("non-standard
// string literals are not supported"), and escape_string_warning is gone
// (42704). The tests that attack with these settings check, there, that
// the server refuses them.
func StandardStringsOnly(s *pgtest.Server) bool { return s.Major >= 19 }

// RequireSQLState fails t unless err is an error of the server with the
// SQLSTATE code; what says what returned err.
func RequireSQLState(t testing.TB, err error, code, what string) {
	t.Helper()
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "%s: %v, want an error of the server with SQLSTATE %s", what, err, code)
	require.Equal(t, code, pgErr.Code, "%s: %v", what, err)
}
