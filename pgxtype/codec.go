package pgxtype

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/bigint"
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
	text := format == pgtype.TextFormatCode
	switch target.(type) {
	case *flake.ID:
		return scanID{text}
	case *sqltype.NullID:
		return scanNullID{text}
	}
	return c.Int8Codec.PlanScan(m, oid, format, target)
}

// The plans decode or encode the int8 and leave the verdict on zero, NULL
// and negative values to the rule of flake.ID's Scan and Value
// (internal/bigint): a type switch, a check and a byte swap, like pgx's
// own int64 plans.

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
// null for NULL. A valid ID takes the rule's fast path (bigint.Write);
// NullID and Bound ask their own Value what they write when it refuses
// (a not-valid or valid-but-zero NullID, a zero Bound).
func argument(value any) (v int64, null bool, err error) {
	var id flake.ID
	switch x := value.(type) {
	case flake.ID:
		v, err = bigint.Write(int64(x))
		return v, false, err
	case sqltype.NullID:
		id = x.ID
		if !x.Valid {
			id = 0
		}
	case sqltype.Bound:
		id = flake.ID(x)
	}
	if v, err := bigint.Write(int64(id)); err == nil {
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

// scanID and scanNullID set their target to what the column's value, or
// NULL, reads as by the rule of flake.ID.Scan (bigint.Read). On error they leave
// the target unchanged.
type scanID struct{ text bool }

func (p scanID) Scan(src []byte, target any) error {
	v, err := decode(src, p.text)
	if err != nil {
		return err
	}
	id, _, err := bigint.Read(v, src == nil)
	if err != nil {
		return err
	}
	*target.(*flake.ID) = flake.ID(id)
	return nil
}

type scanNullID struct{ text bool }

func (p scanNullID) Scan(src []byte, target any) error {
	v, err := decode(src, p.text)
	if err != nil {
		return err
	}
	id, valid, err := bigint.Read(v, src == nil)
	if err != nil && src != nil { // NULL is what a NullID holds when not valid
		return err
	}
	*target.(*sqltype.NullID) = sqltype.NullID{ID: flake.ID(id), Valid: valid}
	return nil
}

// decode returns the int8 in src, binary or text; 0 for NULL (src nil).
// The binary case comes first, inlined.
func decode(src []byte, text bool) (int64, error) {
	if len(src) == 8 && !text {
		return int64(binary.BigEndian.Uint64(src)), nil
	}
	return decodeSlow(src, text)
}

func decodeSlow(src []byte, text bool) (int64, error) {
	switch {
	case src == nil:
		return 0, nil
	case text:
		v, err := strconv.ParseInt(string(src), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("pgxtype: scanning ID: %w: %q is not a bigint", flake.ErrCharacter, src)
		}
		return v, nil
	}
	return 0, fmt.Errorf("pgxtype: scanning ID: %w: int8 is %d bytes, want 8", flake.ErrLength, len(src))
}
