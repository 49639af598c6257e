package flake

import (
	"fmt"
	"time"
)

// Epoch is the instant from which an ID's timestamp counts milliseconds.
// An ID does not carry its epoch: every program that generates or reads
// the IDs of one application must use the same one, and reads an ID's time
// through it ([Epoch.Time]) and turns times into bounds through it
// ([Epoch.MinID], [Epoch.MaxID]): the generator's [Generator.Epoch], or
// [DefaultEpoch] for IDs of the default generator. The zero Epoch is the
// default; [NewEpoch] makes others.
//
// IDs hold times from their epoch to about 278 years after it, so the
// epoch must come before the oldest time an ID is to carry: choose an
// earlier one ([WithEpoch], and migrations.WithEpoch for PostgreSQL's
// generators) before the first ID is made when rows older than 2024 are to
// get IDs, as in a backfill or a conversion from bigserial.
type Epoch struct {
	// offset from the default epoch, in ms, so that the zero value is the
	// default.
	offset int64
}

// defaultEpochUnixMilli is the default epoch, 2024-01-01T00:00:00Z, in Unix
// milliseconds.
const defaultEpochUnixMilli = 1704067200000

// DefaultEpoch returns the default epoch, 2024-01-01T00:00:00Z, the zero
// Epoch: the epoch of the default generator and of every generator not
// given [WithEpoch]. Nothing changes it. IDs under it carry times up to
// 2302-09-27.
func DefaultEpoch() Epoch { return Epoch{} }

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
	return Epoch{offset: ms - defaultEpochUnixMilli}, nil
}

// UnixMilli returns the epoch in Unix milliseconds.
func (e Epoch) UnixMilli() int64 { return defaultEpochUnixMilli + e.offset }

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
// [MaxTimestamp] ms after it, with a message that names the fix: an
// earlier (or later) epoch, chosen before the first ID is made.
func (e Epoch) Timestamp(t time.Time) (int64, error) {
	ms, clamped := e.clamp(t)
	if clamped != 0 {
		return 0, e.rangeError(t, clamped)
	}
	return ms, nil
}

// rangeError is the error of a time t outside e's range: before it
// (clamped < 0) or past its last millisecond.
func (e Epoch) rangeError(t time.Time, clamped int) error {
	where, fix := "before the epoch, "+e.String(), "an earlier"
	if clamped > 0 {
		where = fmt.Sprintf("after %s, the last millisecond IDs hold under the epoch %s",
			e.Time(Max).Format(RFC3339Milli), e)
		fix = "a later"
	}
	return fmt.Errorf("%w: %s is %s; for such times choose %s epoch for every generator of "+
		"these IDs before the first is made (WithEpoch in Go, migrations.WithEpoch in PostgreSQL; "+
		"docs/sql.md, \"The epoch\")", ErrTimeRange, t.UTC().Format(RFC3339Milli), where, fix)
}

// MinID returns the smallest ID that carries the millisecond of t under e
// (the generator's [Generator.Epoch], or [DefaultEpoch]). With
// [Epoch.MaxID] it turns a time range into a key range:
//
//	WHERE id >= MinID(from) AND id < MinID(to)
//
// selects the rows created in [from, to) through the primary-key index.
//
// Times outside the range of e clamp to its ends: a time before e (from
// the beginning) gives the smallest ID, 1; a time after the range's last
// millisecond, e.Time(Max), gives the largest, [Max] (to the end). The
// first millisecond of e gives 1 as well: the zero ID is the unset ID,
// which no generator makes and no driver writes.
func (e Epoch) MinID(t time.Time) ID {
	ms, clamped := e.clamp(t)
	switch {
	case clamped > 0:
		return Max
	case ms == 0:
		return 1
	}
	return ID(ms << RandomBits)
}

// MaxID returns the largest ID that carries the millisecond of t under e,
// for inclusive ranges (id <= MaxID(to)). Times outside the range clamp to
// its ends as in [Epoch.MinID]: before e, the smallest ID, 1; after the
// range, [Max].
func (e Epoch) MaxID(t time.Time) ID {
	ms, clamped := e.clamp(t)
	if clamped < 0 {
		return 1
	}
	return ID(ms<<RandomBits | (1<<RandomBits - 1))
}

// clamp returns t as ms since e, clamped to [0, MaxTimestamp], and -1 or
// +1 when t was before or after that range.
func (e Epoch) clamp(t time.Time) (ms int64, clamped int) {
	start := time.UnixMilli(e.UnixMilli())
	switch {
	case t.Before(start):
		return 0, -1
	case t.Sub(start) > MaxTimestamp*time.Millisecond+(time.Millisecond-1):
		return MaxTimestamp, 1
	}
	return t.UnixMilli() - e.UnixMilli(), 0
}
