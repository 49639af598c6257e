package flake

import (
	"fmt"
	"time"
)

// Epoch is the instant from which an ID's timestamp counts milliseconds.
// Every program that generates or reads the IDs of one application must use
// the same epoch. The zero Epoch is [DefaultEpoch].
type Epoch struct {
	// offset from the default epoch, in ms, so that the zero value is the
	// default.
	offset int64
}

// DefaultEpochUnixMilli is the default epoch, 2024-01-01T00:00:00Z, in Unix
// milliseconds.
const DefaultEpochUnixMilli = 1704067200000

// DefaultEpoch is 2024-01-01T00:00:00Z. IDs under it carry times up to
// 2302-09-27.
var DefaultEpoch = Epoch{}

// maxEpochUnixMilli keeps every time an ID can carry within year 9999.
var maxEpochUnixMilli = time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixMilli() - MaxTimestamp

// NewEpoch returns the epoch that starts at t, truncated to the
// millisecond. It returns [ErrEpochRange] when t is before
// 1970-01-01T00:00:00Z or so late that IDs would carry times past year 9999.
func NewEpoch(t time.Time) (Epoch, error) {
	ms := t.UnixMilli()
	if t.Before(time.Unix(0, 0)) || ms > maxEpochUnixMilli {
		return Epoch{}, fmt.Errorf("%w: %s is not between 1970-01-01 and %s",
			ErrEpochRange, t.UTC().Format(time.RFC3339Nano), time.UnixMilli(maxEpochUnixMilli).UTC().Format(time.RFC3339))
	}
	return Epoch{offset: ms - DefaultEpochUnixMilli}, nil
}

// UnixMilli returns the epoch in Unix milliseconds.
func (e Epoch) UnixMilli() int64 { return DefaultEpochUnixMilli + e.offset }

// String returns the epoch in RFC 3339 form with milliseconds.
func (e Epoch) String() string {
	return time.UnixMilli(e.UnixMilli()).UTC().Format(RFC3339Milli)
}

// RFC3339Milli is the layout this module prints times in: RFC 3339, UTC,
// with milliseconds.
const RFC3339Milli = "2006-01-02T15:04:05.000Z07:00"

// Time returns the time carried by id under e, in UTC.
func (e Epoch) Time(id ID) time.Time {
	return time.UnixMilli(e.UnixMilli() + id.Timestamp()).UTC()
}

// Timestamp returns t as milliseconds since e, truncated to the
// millisecond. It returns [ErrTimeRange] when t is before e or more than
// [MaxTimestamp] ms after it.
func (e Epoch) Timestamp(t time.Time) (int64, error) {
	ms := t.UnixMilli() - e.UnixMilli()
	if t.Before(time.UnixMilli(e.UnixMilli())) || ms > MaxTimestamp {
		return 0, fmt.Errorf("%w: %s is not between %s and %s", ErrTimeRange,
			t.UTC().Format(RFC3339Milli), e, e.Time(Max).Format(RFC3339Milli))
	}
	return ms, nil
}

// MinID returns the smallest ID that carries the millisecond of t under e.
// With [Epoch.MaxID] it turns a time range into a key range:
//
//	WHERE id >= MinID(from) AND id < MinID(to)
//
// selects the rows created in [from, to) through the primary-key index.
// It returns [ErrTimeRange] when e cannot represent t.
func (e Epoch) MinID(t time.Time) (ID, error) {
	ms, err := e.Timestamp(t)
	if err != nil {
		return 0, err
	}
	return ID(ms << RandomBits), nil
}

// MaxID returns the largest ID that carries the millisecond of t under e,
// for inclusive ranges (id <= MaxID(to)). It returns [ErrTimeRange] when e
// cannot represent t.
func (e Epoch) MaxID(t time.Time) (ID, error) {
	ms, err := e.Timestamp(t)
	if err != nil {
		return 0, err
	}
	return ID(ms<<RandomBits | (1<<RandomBits - 1)), nil
}

// MinID is [Epoch.MinID] under [DefaultEpoch].
func MinID(t time.Time) (ID, error) { return DefaultEpoch.MinID(t) }

// MaxID is [Epoch.MaxID] under [DefaultEpoch].
func MaxID(t time.Time) (ID, error) { return DefaultEpoch.MaxID(t) }
