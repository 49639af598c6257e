package ulidflake_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
)

func ExampleNew() {
	id, err := ulidflake.New()
	if err != nil {
		panic(err)
	}
	fmt.Println(len(id.String()), id.Int64() > 0)
	// Output: 13 true
}

func ExampleNewWait() {
	id, err := ulidflake.NewWait(context.Background())
	fmt.Println(!id.IsZero(), err)
	// Output: true <nil>
}

func ExampleParse() {
	id, err := ulidflake.Parse("00EZJCRCB4650")
	fmt.Println(id.Int64(), ulidflake.DefaultEpoch().Time(id).Format(time.RFC3339Nano), err)
	// Output: 16873543940839584 2024-07-05T05:57:45.483Z <nil>
}

// From a bigint read as text, as a URL or a CSV file carries it.
func ExampleParseInt() {
	id, err := ulidflake.ParseInt("16873543940839584")
	fmt.Println(id, err)
	_, err = ulidflake.ParseInt("-1")
	fmt.Println(err != nil)
	// Output:
	// 00EZJCRCB4650 <nil>
	// true
}

// From an int64 that did not come from an ID: ulidflake.ID(v) would take
// a negative v.
func ExampleFromInt() {
	id, err := ulidflake.FromInt(16873543940839584)
	fmt.Println(id, err)
	_, err = ulidflake.FromInt(-5)
	fmt.Println(err != nil)
	// Output:
	// 00EZJCRCB4650 <nil>
	// true
}

// A backfill: an ID for an old row's own time. A time before the epoch
// (2024-01-01) is refused, never clamped, and the error names the fix: an
// earlier epoch ([ulidflake.WithEpoch]), chosen before the first ID.
func ExampleNewAt() {
	at := time.Date(2024, 7, 5, 5, 57, 45, 483e6, time.UTC)
	id, err := ulidflake.NewAt(at)
	fmt.Println(ulidflake.DefaultEpoch().Time(id).Equal(at), err)
	_, err = ulidflake.NewAt(time.Date(2023, 12, 31, 0, 0, 0, 0, time.UTC))
	fmt.Println(errors.Is(err, ulidflake.ErrTimeRange))
	// Output:
	// true <nil>
	// true
}

// New refuses past this millisecond's capacity rather than wait; a burst
// that may exceed it waits for the next millisecond with NewWait.
func ExampleErrMonotonicOverflow() {
	id, err := ulidflake.New()
	if errors.Is(err, ulidflake.ErrMonotonicOverflow) {
		id, err = ulidflake.NewWait(context.Background())
	}
	fmt.Println(!id.IsZero(), err)
	// Output: true <nil>
}

func ExampleMustParse() {
	type Order struct {
		ID       ulidflake.ID     `json:"id"`
		Customer ulidflake.NullID `json:"customer"`
	}
	out, _ := json.Marshal(Order{ID: ulidflake.MustParse("00EZJCRCB4650")})
	fmt.Println(string(out))
	// Output: {"id":"00EZJCRCB4650","customer":null}
}

func ExampleNewGenerator() {
	g, err := ulidflake.NewGenerator(ulidflake.WithSID(3))
	if err != nil {
		panic(err)
	}
	id, err := g.NewWait(context.Background())
	fmt.Println(id.SID(), err)
	// Output: 3 <nil>
}

// Generators with distinct SIDs (one per process, as package sidlease
// hands them out) never make the same ID.
func ExampleWithSID() {
	a, _ := ulidflake.NewGenerator(ulidflake.WithSID(1))
	b, _ := ulidflake.NewGenerator(ulidflake.WithSID(2))
	x, _ := a.NewWait(context.Background())
	y, _ := b.NewWait(context.Background())
	fmt.Println(x.SID(), y.SID(), x != y)
	// Output: 1 2 true
}

// An application whose history starts before 2024 counts from an earlier
// epoch, in every program that makes or reads its IDs (and in SQL:
// docs/sql.md, "The epoch").
func ExampleNewEpoch() {
	epoch, err := ulidflake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(epoch, epoch.UnixMilli(), err)
	// Output: 2020-01-01T00:00:00.000Z 1577836800000 <nil>
}

// History older than 2024 needs an earlier epoch; an ID made under it
// reads its time from that epoch, the generator's, never the default.
func ExampleWithEpoch() {
	epoch, _ := ulidflake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	g, _ := ulidflake.NewGenerator(ulidflake.WithEpoch(epoch))
	old := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	id, err := g.NewAt(old)
	fmt.Println(g.Epoch().Time(id).Equal(old), ulidflake.DefaultEpoch().Time(id).Equal(old), err)
	// Output: true false <nil>
}

func ExampleGenerator_New() {
	g, _ := ulidflake.NewGenerator()
	a, _ := g.New()
	b, _ := g.New()
	fmt.Println(a < b || b.IsZero()) // b is zero only if the millisecond overflowed
	// Output: true
}

func ExampleGenerator_NewWait() {
	g, _ := ulidflake.NewGenerator()
	id, err := g.NewWait(context.Background())
	fmt.Println(!id.IsZero(), err)
	// Output: true <nil>
}

// Keyset pagination: the zero cursor means "from the start". An unset
// ulidflake.ID is refused as a statement argument (so that it is never
// stored as a key), so the cursor is a Bound.
func ExampleBound() {
	const page = `SELECT id, name FROM customers WHERE id > $1 ORDER BY id LIMIT 100`
	var cursor ulidflake.Bound // zero: the first page
	v, err := cursor.Value()
	fmt.Println(page != "", v, err)
	_, err = ulidflake.ID(0).Value()
	fmt.Println(err != nil)
	// Output:
	// true 0 <nil>
	// true
}

// A time range as a key range, under the IDs' epoch: the generator's
// g.Epoch(), here the default.
func ExampleDefaultEpoch() {
	epoch := ulidflake.DefaultEpoch()
	from := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	lo := epoch.MinID(from)
	hi := epoch.MinID(from.AddDate(0, 0, 1))
	fmt.Println(lo, hi) // WHERE id >= lo AND id < hi: one day, on the primary key
	// Output: 019K7FK000000 019NSWA000000
}

// OrderPrefix names OrderID's prefix: exported, so that generated code can
// name the type OrderID stands for.
type OrderPrefix struct{}

func (OrderPrefix) Prefix() string { return "ord" }

// OrderID prints, marshals and parses as ord_ and 13 characters, and is
// stored as a bigint.
type OrderID = ulidflake.Prefixed[OrderPrefix]

func ExamplePrefixed() {
	id, err := ulidflake.New()
	if err != nil {
		panic(err)
	}
	order := struct {
		ID    OrderID `json:"id"`
		Total int     `json:"total"`
	}{ID: OrderID{ID: id}, Total: 10}
	b, _ := json.Marshal(order)
	fmt.Println(string(b[:11]), len(order.ID.String()))
	// Output: {"id":"ord_ 17
}

func ExampleParsePrefixed() {
	id, err := ulidflake.ParsePrefixed[OrderPrefix]("ord_00EZJCRCB4650")
	fmt.Println(id, id.Int64(), err)
	_, err = ulidflake.ParsePrefixed[OrderPrefix]("00EZJCRCB4650")
	fmt.Println(errors.Is(err, ulidflake.ErrPrefix))
	// Output:
	// ord_00EZJCRCB4650 16873543940839584 <nil>
	// true
}

// events counts a generator's events by kind.
type events map[string]int

func (e events) Observe(ev flake.Event) { e[ev.Kind.String()]++ }

// An observer hears a generator's slow paths: here a clock that steps
// back (a clock step), past the max lead, which New refuses with
// ErrClockBehind.
func ExampleWithObserver() {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	seen := events{}
	g, _ := ulidflake.NewGenerator(ulidflake.WithObserver(seen), flake.WithClock(func() time.Time { return at }))
	_, _ = g.New()
	at = at.Add(-time.Minute) // the clock steps back a minute
	_, err := g.New()
	fmt.Println(errors.Is(err, ulidflake.ErrClockBehind), seen)
	// Output: true map[clock_behind:1 clock_step:1]
}
