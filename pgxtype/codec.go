package pgxtype

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/sqltype"
)

// codec is pgx's int8 codec, taught the ID types. Everything else (int64,
// counters, other Go types) goes to the embedded codec unchanged.
type codec struct{ pgtype.Int8Codec }

func (c codec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	switch value.(type) {
	case flake.ID, sqltype.NullID, sqltype.Bound:
		if format == pgtype.BinaryFormatCode {
			return encodeBinary{}
		}
		return encodeText{}
	}
	return c.Int8Codec.PlanEncode(m, oid, format, value)
}

func (c codec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	switch target.(type) {
	case *flake.ID, *sqltype.NullID:
		if format == pgtype.BinaryFormatCode {
			return scanBinary{}
		}
		return scanText{}
	}
	return c.Int8Codec.PlanScan(m, oid, format, target)
}

// The plans decode or encode the int8 and leave the verdict on zero, NULL
// and negative values to flake.FromColumn and flake.ID.ColumnValue: a
// type switch, a check and a byte swap, like pgx's own int64 plans.

type encodeBinary struct{}

func (encodeBinary) Encode(value any, buf []byte) ([]byte, error) {
	v, null, err := argument(value)
	if err != nil || null {
		return nil, err
	}
	return binary.BigEndian.AppendUint64(buf, uint64(v)), nil
}

type encodeText struct{}

func (encodeText) Encode(value any, buf []byte) ([]byte, error) {
	v, null, err := argument(value)
	if err != nil || null {
		return nil, err
	}
	return strconv.AppendInt(buf, v, 10), nil
}

// argument returns the int64 that value, an ID, NullID or Bound, writes, or
// null for NULL. A valid ID takes flake.ID.ColumnValue's fast path;
// NullID and Bound ask their own Value what they write when it refuses
// (a not-valid or valid-but-zero NullID, a zero Bound).
func argument(value any) (v int64, null bool, err error) {
	var id flake.ID
	switch x := value.(type) {
	case flake.ID:
		v, err = x.ColumnValue()
		return v, false, err
	case sqltype.NullID:
		id = x.ID
		if !x.Valid {
			id = 0
		}
	case sqltype.Bound:
		id = flake.ID(x)
	}
	if v, err := id.ColumnValue(); err == nil {
		return v, false, nil
	}
	dv, err := value.(driver.Valuer).Value() // no allocation: nil, or 0
	if err != nil {
		return 0, false, err
	}
	if dv == nil {
		return 0, true, nil
	}
	return dv.(int64), false, nil
}

type scanBinary struct{}

func (scanBinary) Scan(src []byte, target any) error {
	if src != nil && len(src) != 8 {
		return fmt.Errorf("pgxtype: scanning ID: %w: int8 is %d bytes, want 8", flake.ErrLength, len(src))
	}
	var v int64
	if src != nil {
		v = int64(binary.BigEndian.Uint64(src))
	}
	return scanned(v, src == nil, target)
}

type scanText struct{}

func (scanText) Scan(src []byte, target any) error {
	var v int64
	if src != nil {
		var err error
		if v, err = strconv.ParseInt(string(src), 10, 64); err != nil {
			return fmt.Errorf("pgxtype: scanning ID: %w: %q is not a bigint", flake.ErrCharacter, src)
		}
	}
	return scanned(v, src == nil, target)
}

// scanned sets target, an *ID or *NullID, to what the column's value v, or
// NULL, reads as by the rule of flake.FromColumn. On error it leaves
// target unchanged.
func scanned(v int64, null bool, target any) error {
	id, valid, err := flake.FromColumn(v, null)
	switch t := target.(type) {
	case *flake.ID:
		if err == nil {
			*t = id
		}
		return err
	case *sqltype.NullID:
		if err != nil && !null {
			return err
		}
		*t = sqltype.NullID{ID: id, Valid: valid}
	}
	return nil
}
