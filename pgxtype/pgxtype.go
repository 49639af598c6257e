// Package pgxtype makes Ulid-Flake IDs a native pgx v5 type: IDs travel as
// binary int8 (bigint), in both directions, without boxing or allocating per
// value.
//
// Register it on every connection, in two lines of pgxpool configuration:
//
//	cfg, _ := pgxpool.ParseConfig(url)
//	cfg.AfterConnect = pgxtype.AfterConnect
//
// or, for a single connection, pgxtype.Register(conn.TypeMap()). Users of
// database/sql through pgx/v5/stdlib pass the same function to
// stdlib.OptionAfterConnect:
//
//	db := stdlib.OpenDB(*connConfig, stdlib.OptionAfterConnect(pgxtype.AfterConnect))
//
// Register covers ulidflake.ID, ulidflake.NullID and ulidflake.Bound, their
// pointers, and slices of them for bigint[] (WHERE id = ANY($1)), in every
// query exec mode and in CopyFrom. Like ID.Value, encoding refuses the zero
// ID (flake.ErrZeroID; a zero pagination cursor is ulidflake.Bound(0)) and
// negative values (flake.ErrRange); scanning refuses NULL into an ID
// (flake.ErrNull; use NullID) and negative values, with errors that name
// the value.
//
// Without Register, ulidflake.ID still works through its driver.Valuer and
// sql.Scanner, also as binary int8, at the cost of an allocation per
// scanned value. Prefixed IDs (ulidflake.Prefixed[P]) and per-entity types
// (struct{ ulidflake.ID }) always work that way, with or without Register. Slices of IDs as parameters in QueryExecModeExec and
// QueryExecModeSimpleProtocol need Register (pgx cannot tell their element
// type without describing the statement).
//
// In CopyFrom, pgx reports an encoding error (a zero ID, say) through the
// server's COPY failure, as text: the whole COPY is rolled back, and the
// error message names the cause, but errors.Is cannot see the sentinel.
//
// rows.Values() is unchanged: a bigint column decodes to int64 whatever the
// Go type it holds, because pgx cannot tell an ID column from a counter.
// Convert with ulidflake.ID(v.(int64)).
package pgxtype

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

// Register teaches m the ID types: it replaces the int8 codec by one that
// knows them (and delegates everything else to pgx's own), re-registers
// bigint[] on top of it, and makes the ID types' default PostgreSQL type
// int8, so that the simple protocol and unknown parameter types encode them
// as bigint.
func Register(m *pgtype.Map) {
	int8Type := &pgtype.Type{Name: "int8", OID: pgtype.Int8OID, Codec: codec{}}
	m.RegisterType(int8Type)
	m.RegisterType(&pgtype.Type{Name: "_int8", OID: pgtype.Int8ArrayOID, Codec: &pgtype.ArrayCodec{ElementType: int8Type}})
	for _, v := range []any{flake.ID(0), sqltype.NullID{}, sqltype.Bound(0)} {
		m.RegisterDefaultPgType(v, "int8")
	}
	for _, v := range []any{[]flake.ID(nil), []sqltype.NullID(nil)} {
		m.RegisterDefaultPgType(v, "_int8")
	}
}

// AfterConnect registers the ID types on conn. Its signature fits
// pgxpool.Config.AfterConnect and stdlib.OptionAfterConnect.
func AfterConnect(ctx context.Context, conn *pgx.Conn) error {
	Register(conn.TypeMap())
	return registerDomains(ctx, conn) // domain.go
}
