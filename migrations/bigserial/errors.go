package bigserial

import (
	"errors"
	"fmt"
)

// Errors of [ConvertKeys], [KeysIn] and the [Conversion]'s methods.
// Each wraps ErrConvert. Where the functions are not installed, the error
// wraps ErrConvert and [migrations.ErrNotInstalled]. A failure of the
// database or the connection wraps the driver's error (errors.As reaches
// *pgconn.PgError) and not ErrConvert.
var (
	// ErrConvert: the column cannot be converted as asked.
	ErrConvert = errors.New("bigserial: cannot convert")
	// ErrDependents: objects that PostgreSQL cannot carry across the
	// conversion depend on a column it widens, or on the sequence it drops;
	// the error names each of them, and [WithDependents] is the way on.
	ErrDependents = fmt.Errorf("%w: objects depend on what the conversion changes", ErrConvert)
)
