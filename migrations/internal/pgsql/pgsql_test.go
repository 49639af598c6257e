package pgsql

import (
	"errors"
	"fmt"
	"testing"
)

func TestQuoteIdent(t *testing.T) {
	for in, want := range map[string]string{
		"t":         `"t"`,
		`Mixed "q"`: `"Mixed ""q"""`,
		"":          `""`,
		"a\nb":      "\"a\nb\"",
	} {
		if got := QuoteIdent(in); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestQuoteLiteral(t *testing.T) {
	for in, want := range map[string]string{
		"x":     "E'x'",
		`a'b\c`: `E'a''b\\c'`,
		`\'`:    `E'\\'''`,
		"":      "E''",
	} {
		if got := QuoteLiteral(in); got != want {
			t.Errorf("QuoteLiteral(%q) = %s, want %s", in, got, want)
		}
	}
}

type stateError string

func (e stateError) Error() string    { return "server: " + string(e) }
func (e stateError) SQLState() string { return string(e) }

func TestSQLState(t *testing.T) {
	if got := SQLState(fmt.Errorf("wrapped: %w", stateError("42P01"))); got != "42P01" {
		t.Errorf("wrapped server error: %q, want 42P01", got)
	}
	if got := SQLState(errors.New("no server")); got != "" {
		t.Errorf("no server error: %q, want empty", got)
	}
}
