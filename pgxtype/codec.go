package pgxtype

import (
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
	case flake.ID:
		if format == pgtype.BinaryFormatCode {
			return encodeBinaryID{}
		}
		return encodeText{}
	case sqltype.NullID:
		if format == pgtype.BinaryFormatCode {
			return encodeBinaryNullID{}
		}
		return encodeText{}
	case sqltype.Bound:
		if format == pgtype.BinaryFormatCode {
			return encodeBinaryBound{}
		}
		return encodeText{}
	}
	return c.Int8Codec.PlanEncode(m, oid, format, value)
}

func (c codec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	switch target.(type) {
	case *flake.ID:
		if format == pgtype.BinaryFormatCode {
			return scanBinaryID{}
		}
		return scanText{}
	case *sqltype.NullID:
		if format == pgtype.BinaryFormatCode {
			return scanBinaryNullID{}
		}
		return scanText{}
	}
	return c.Int8Codec.PlanScan(m, oid, format, target)
}

// Binary plans, one per Go type: a type assertion, a check and a byte swap,
// like pgx's own int64 plans.

type encodeBinaryID struct{}

func (encodeBinaryID) Encode(value any, buf []byte) ([]byte, error) {
	v := int64(value.(flake.ID))
	if v <= 0 {
		return nil, writeError(v)
	}
	return binary.BigEndian.AppendUint64(buf, uint64(v)), nil
}

type encodeBinaryNullID struct{}

func (encodeBinaryNullID) Encode(value any, buf []byte) ([]byte, error) {
	n := value.(sqltype.NullID)
	if !n.Valid {
		return nil, nil // NULL
	}
	if n.ID == 0 {
		_, err := n.Value() // says that the NullID is valid but zero
		return nil, err
	}
	if n.ID < 0 {
		return nil, writeError(int64(n.ID))
	}
	return binary.BigEndian.AppendUint64(buf, uint64(n.ID)), nil
}

type encodeBinaryBound struct{}

func (encodeBinaryBound) Encode(value any, buf []byte) ([]byte, error) {
	v := int64(value.(sqltype.Bound))
	if v < 0 {
		return nil, writeError(v)
	}
	return binary.BigEndian.AppendUint64(buf, uint64(v)), nil
}

type scanBinaryID struct{}

func (scanBinaryID) Scan(src []byte, target any) error {
	if len(src) != 8 {
		return binaryError(src)
	}
	v := int64(binary.BigEndian.Uint64(src))
	if v < 0 {
		return negativeError(v)
	}
	*target.(*flake.ID) = flake.ID(v)
	return nil
}

type scanBinaryNullID struct{}

func (scanBinaryNullID) Scan(src []byte, target any) error {
	t := target.(*sqltype.NullID)
	if src == nil {
		*t = sqltype.NullID{}
		return nil
	}
	if len(src) != 8 {
		return binaryError(src)
	}
	v := int64(binary.BigEndian.Uint64(src))
	if v < 0 {
		return negativeError(v)
	}
	*t = sqltype.NullID{ID: flake.ID(v), Valid: v != 0} // a 0 is not valid, as in NullID.Scan
	return nil
}

// Text plans (the simple protocol) serve every type.

type encodeText struct{}

func (encodeText) Encode(value any, buf []byte) ([]byte, error) {
	var v int64
	switch x := value.(type) {
	case flake.ID:
		v = int64(x)
	case sqltype.NullID:
		if !x.Valid {
			return nil, nil
		}
		v = int64(x.ID)
	case sqltype.Bound:
		if x >= 0 {
			return strconv.AppendInt(buf, int64(x), 10), nil
		}
		v = int64(x)
	}
	if v <= 0 {
		return nil, writeError(v)
	}
	return strconv.AppendInt(buf, v, 10), nil
}

type scanText struct{}

func (scanText) Scan(src []byte, target any) error {
	if src == nil {
		if n, ok := target.(*sqltype.NullID); ok {
			*n = sqltype.NullID{}
			return nil
		}
		return binaryError(nil)
	}
	v, err := strconv.ParseInt(string(src), 10, 64)
	if err != nil {
		return fmt.Errorf("pgxtype: scanning ID: %w: %q is not a bigint", flake.ErrCharacter, src)
	}
	if v < 0 {
		return negativeError(v)
	}
	switch t := target.(type) {
	case *flake.ID:
		*t = flake.ID(v)
	case *sqltype.NullID:
		*t = sqltype.NullID{ID: flake.ID(v), Valid: v != 0} // a 0 is not valid, as in NullID.Scan
	}
	return nil
}

// writeError is the error for an ID argument v <= 0.
func writeError(v int64) error {
	if v == 0 {
		return flake.ErrZeroID
	}
	return fmt.Errorf("pgxtype: ID argument: %w: %d is negative", flake.ErrIntRange, v)
}

func negativeError(v int64) error {
	return fmt.Errorf("pgxtype: scanning ID: %w: %d is negative", flake.ErrIntRange, v)
}

// binaryError is the error for a NULL (src nil) or a malformed int8.
func binaryError(src []byte) error {
	if src == nil {
		return fmt.Errorf("pgxtype: %w", flake.ErrNull)
	}
	return fmt.Errorf("pgxtype: scanning ID: %w: int8 is %d bytes, want 8", flake.ErrLength, len(src))
}
