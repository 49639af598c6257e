// Package pgsql is the one home of the helpers with which the installer
// (package migrations) and the conversion (package bigserial) write SQL
// text and read PostgreSQL's errors: quoting names and literals so that
// no setting changes how they read, and the SQLSTATE of an error.
package pgsql

import (
	"errors"
	"strings"
)

// QuoteIdent quotes s as a PostgreSQL identifier, with double quotes
// doubled: it names exactly s, in any case and whatever it holds.
func QuoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// QuoteLiteral quotes s as an escape string literal, E'...', with
// backslashes and quotes doubled: it reads the same whatever
// standard_conforming_strings and backslash_quote say.
func QuoteLiteral(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "E'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// SQLState returns the SQLSTATE of the server's error that err wraps, or
// "" when it wraps none. It reads any driver's error that has a
// SQLState() method (pgx's *pgconn.PgError has).
func SQLState(err error) string {
	var state interface{ SQLState() string }
	if errors.As(err, &state) {
		return state.SQLState()
	}
	return ""
}
