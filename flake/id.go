// Package flake implements Ulid-Flake, a 64-bit, time-sortable identifier
// that fits an int64 and a PostgreSQL bigint.
//
// An ID is laid out as follows, most significant bit first:
//
//	bit 63      62 ............................ 20   19 ................. 0
//	 [ 0 ] [ 43-bit timestamp, ms since epoch ] [ 20-bit randomness      ]   stand-alone (default)
//	 [ 0 ] [ 43-bit timestamp, ms since epoch ] [ 15-bit randomness ][SID]   scalable (SID = 5 bits)
//
// The sign bit is always 0, so every valid ID is a non-negative int64. The
// timestamp counts milliseconds since an epoch, 2024-01-01T00:00:00Z unless a
// generator is given another one (see [Epoch]). An ID does not carry its
// epoch, so its time is read through one: [Epoch.Time], with the
// generator's [Generator.Epoch] or [DefaultEpoch]. In the scalable layout
// the low 5 bits carry a scalability id (SID, 0..31) that tells generators
// apart.
//
// The text form is 13 characters of Crockford Base32, upper case, most
// significant bits first, so that text order, numeric order and time order
// agree. [Parse] is strict: case-insensitive, ASCII only, exactly 13 bytes,
// no aliasing of I, L, O or U, and nothing above 7ZZZZZZZZZZZZ (2^63-1).
//
// The zero ID means "unset", like a nil UUID. No [Generator] ever returns it.
//
// This package depends on the standard library only. Database support lives
// in the sibling packages sqltype, pgxtype and gormplugin; most programs
// import the root package github.com/ulidflake/ulidflake instead.
package flake

// ID is a Ulid-Flake identifier. See the package documentation for the
// layout. IDs compare with <, ==, and [ID.Compare] in time order.
type ID int64

// Layout constants.
const (
	// timestampBits is the width of the timestamp field.
	timestampBits = 43
	// RandomBits is the width of the randomness in the stand-alone layout.
	RandomBits = 20
	// ScalableRandomBits is the width of the randomness in the scalable layout.
	ScalableRandomBits = 15
	// SIDBits is the width of the scalability id in the scalable layout.
	SIDBits = 5

	// MaxTimestamp is the largest timestamp, in milliseconds since the epoch
	// (about 278 years).
	MaxTimestamp = 1<<timestampBits - 1
	// MaxSID is the largest scalability id.
	MaxSID = 1<<SIDBits - 1

	// TextLen is the length of the text form, in bytes.
	TextLen = 13
	// binaryLen is the length of the binary form.
	binaryLen = 8
)

// Max is the largest ID, 7ZZZZZZZZZZZZ (2^63-1).
const Max ID = 1<<63 - 1

// Zero is the unset ID, 0000000000000.
const Zero ID = 0

// FromInt returns the ID with the value v. It returns [ErrRange] when v is
// negative. Zero is accepted: it is the unset ID. (It is the rule of
// [ID.Scan] for a value that is not NULL.)
func FromInt(v int64) (ID, error) {
	id, _, err := fromColumn(v, false)
	return id, err
}

// Int64 returns the ID as an int64, the value stored in a bigint column.
func (id ID) Int64() int64 { return int64(id) }

// IsZero reports whether id is the unset ID.
func (id ID) IsZero() bool { return id == 0 }

// Compare returns -1, 0 or +1 as id is less than, equal to or greater than
// other. The order is numeric order, which is also text and time order.
func (id ID) Compare(other ID) int {
	switch {
	case id < other:
		return -1
	case id > other:
		return 1
	}
	return 0
}

// Timestamp returns the raw timestamp field: milliseconds since the epoch
// of the generator that made the ID.
func (id ID) Timestamp() int64 { return int64(uint64(id)>>RandomBits) & MaxTimestamp }

// Randomness returns the 20-bit randomness field of the stand-alone layout.
func (id ID) Randomness() uint32 { return uint32(id) & (1<<RandomBits - 1) }

// ScalableRandomness returns the 15-bit randomness field of the scalable
// layout.
func (id ID) ScalableRandomness() uint16 {
	return uint16(uint32(id)>>SIDBits) & (1<<ScalableRandomBits - 1)
}

// SID returns the 5-bit scalability id of the scalable layout. For an ID of
// the stand-alone layout it is just the low 5 bits of the randomness.
func (id ID) SID() int { return int(id) & MaxSID }
