package flake_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

func ExampleNew() {
	id, err := flake.New()
	if err != nil {
		panic(err) // flake.ErrMonotonicOverflow: more than ~4,000 IDs in this millisecond
	}
	fmt.Println(len(id.String()), id > 0)
	// Output: 13 true
}

func ExampleNewWait() {
	id, err := flake.NewWait(context.Background())
	fmt.Println(id > 0, err)
	// Output: true <nil>
}

func ExampleParse() {
	id, err := flake.Parse("00ezjcrcb4650") // case-insensitive
	fmt.Println(id, id.Int64(), err)

	_, err = flake.Parse("8000000000000")
	fmt.Println(errors.Is(err, flake.ErrRange), err)
	// Output:
	// 00EZJCRCB4650 16873543940839584 <nil>
	// true flake: value above 7ZZZZZZZZZZZZ: "8000000000000"
}

func ExampleMustParse() {
	fmt.Println(flake.MustParse("7ZZZZZZZZZZZZ") == flake.Max)
	// Output: true
}

func ExampleParseInt() {
	id, err := flake.ParseInt("16873543940839584")
	fmt.Println(id, err)
	_, err = flake.ParseInt("-1")
	fmt.Println(err)
	// Output:
	// 00EZJCRCB4650 <nil>
	// flake: integer out of range: "-1" is negative
}

func ExampleFromInt() {
	id, err := flake.FromInt(16873543940839584)
	fmt.Println(id, err)
	_, err = flake.FromInt(-5)
	fmt.Println(errors.Is(err, flake.ErrRange))
	// Output:
	// 00EZJCRCB4650 <nil>
	// true
}

func ExampleID_fields() {
	id := flake.MustParse("00EZJCRCB4B32") // scalable, SID 2
	fmt.Println(id.Timestamp(), flake.DefaultEpoch().Time(id).Format(flake.RFC3339Milli))
	fmt.Println(id.Randomness(), id.ScalableRandomness(), id.SID())
	// Output:
	// 16091865483 2024-07-05T05:57:45.483Z
	// 142434 4451 2
}

func ExampleID_Compare() {
	a, b := flake.MustParse("00EZJCRCB4650"), flake.MustParse("00EZJCRCBDKGC")
	fmt.Println(a.Compare(b), a < b, a.IsZero(), flake.Zero.IsZero())
	// Output: -1 true false true
}

func ExampleID_AppendText() {
	buf := []byte("id=")
	buf, err := flake.MustParse("00EZJCRCB4650").AppendText(buf)
	fmt.Println(string(buf), err)
	// Output: id=00EZJCRCB4650 <nil>
}

func ExampleID_MarshalBinary() {
	b, _ := flake.MustParse("00EZJCRCB4650").MarshalBinary()
	var id flake.ID
	err := id.UnmarshalBinary(b)
	fmt.Printf("%x %s %v\n", b, id, err)
	// Output: 003bf26618b218a0 00EZJCRCB4650 <nil>
}

func ExampleID_MarshalJSON() {
	type Order struct {
		ID flake.ID `json:"id"`
	}
	out, _ := json.Marshal(Order{ID: flake.MustParse("00EZJCRCB4650")})
	fmt.Println(string(out))

	// A string. A bare number above 2^53 is refused: JavaScript has
	// already rounded it (to another ID) by the time it arrives.
	var in Order
	err := json.Unmarshal([]byte(`{"id":"00EZJCRCB4650"}`), &in)
	fmt.Println(in.ID, err)
	err = json.Unmarshal([]byte(`{"id":16873543940839584}`), &in)
	fmt.Println(errors.Is(err, flake.ErrJSON))
	// Output:
	// {"id":"00EZJCRCB4650"}
	// 00EZJCRCB4650 <nil>
	// true
}

func ExampleNewGenerator() {
	// The scalable layout: every process of the fleet gets its own SID.
	g, err := flake.NewGenerator(flake.WithSID(7), flake.WithEntropy(2))
	if err != nil {
		panic(err)
	}
	id, err := g.NewWait(context.Background())
	fmt.Println(id.SID(), err)

	_, err = flake.NewGenerator(flake.WithSID(32))
	fmt.Println(err)
	// Output:
	// 7 <nil>
	// flake: invalid option: WithSID(32): want 0..31
}

func ExampleGenerator_New() {
	// A clock fixed in tests: New reports overflow instead of waiting.
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	g, _ := flake.NewGenerator(flake.WithClock(func() time.Time { return at }))
	n := 0
	for {
		if _, err := g.New(); errors.Is(err, flake.ErrMonotonicOverflow) {
			break
		}
		n++
	}
	fmt.Println(n > 0)
	// Output: true
}

func ExampleWithEpoch() {
	epoch, err := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	g, _ := flake.NewGenerator(flake.WithEpoch(epoch), flake.WithClock(func() time.Time { return at }))
	id, _ := g.New()
	// Read under the wrong epoch, the same ID lands four years late.
	fmt.Println(epoch, epoch.Time(id).Format(flake.RFC3339Milli), flake.DefaultEpoch().Time(id).Format(flake.RFC3339Milli))
	// Output: 2020-01-01T00:00:00.000Z 2025-01-01T00:00:00.000Z 2029-01-01T00:00:00.000Z
}

func ExampleEpoch_MinID() {
	// Rows created in [from, to): WHERE id >= $1 AND id < $2, on the primary
	// key. The bounds come from the epoch the IDs were made under: the
	// generator's g.Epoch(), here the default.
	epoch := flake.DefaultEpoch()
	from := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(24 * time.Hour)
	lo := epoch.MinID(from)
	hi := epoch.MinID(to)
	fmt.Println(lo, hi)
	// Output: 019K7FK000000 019NSWA000000
}

func ExampleEpoch_MaxID() {
	epoch := flake.DefaultEpoch()
	at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	lo := epoch.MinID(at)
	hi := epoch.MaxID(at)
	fmt.Println(lo, hi, int64(hi-lo+1)) // a millisecond holds 2^20 IDs
	// Output: 019K7FK000000 019K7FK00ZZZZ 1048576
}

func ExampleEpoch_MinID_clamp() {
	// Times outside the range clamp to its ends: "from the beginning" and
	// "to the end" need no special case.
	epoch := flake.DefaultEpoch()
	lo := epoch.MinID(time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)) // before the epoch
	hi := epoch.MinID(time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC)) // past 2302-09-27
	fmt.Println(lo, hi)
	// Output: 0000000000001 7ZZZZZZZZZZZZ
}

func ExampleEpoch_Time_history() {
	// An ID does not carry its epoch: read its time through the epoch of
	// the generator that made it.
	epoch, _ := flake.NewEpoch(time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC))
	g, _ := flake.NewGenerator(flake.WithEpoch(epoch))
	invoiced := time.Date(2019, 3, 14, 9, 26, 53, 589e6, time.UTC) // older than 2024
	id, _ := g.NewAt(invoiced)
	fmt.Println(g.Epoch().Time(id).Format(flake.RFC3339Milli))
	// Under the default epoch, 2019 is out of range: the error names the fix.
	_, err := flake.NewAt(invoiced)
	fmt.Println(errors.Is(err, flake.ErrTimeRange))
	// Output:
	// 2019-03-14T09:26:53.589Z
	// true
}

func ExampleNewEpoch() {
	epoch, err := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(epoch, epoch.UnixMilli(), err)
	_, err = flake.NewEpoch(time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(errors.Is(err, flake.ErrEpochRange))
	// Output:
	// 2020-01-01T00:00:00.000Z 1577836800000 <nil>
	// true
}

func ExampleEpoch_Time() {
	fmt.Println(flake.DefaultEpoch().Time(flake.MustParse("00EZJCRCB4650")).Format(flake.RFC3339Milli))
	// Output: 2024-07-05T05:57:45.483Z
}

func ExampleWithSID() {
	g, _ := flake.NewGenerator(flake.WithSID(31))
	id, _ := g.NewWait(context.Background())
	fmt.Println(id.SID())
	// Output: 31
}

func ExampleWithEntropy() {
	// Bigger random steps: harder to guess the next ID, fewer IDs per millisecond.
	_, err := flake.NewGenerator(flake.WithEntropy(3))
	fmt.Println(err)
	_, err = flake.NewGenerator(flake.WithSID(1), flake.WithEntropy(3))
	fmt.Println(err)
	// Output:
	// <nil>
	// flake: invalid option: WithEntropy(3): want 1..2 for the scalable layout
}

func ExampleWithClock() {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	g, _ := flake.NewGenerator(flake.WithClock(func() time.Time { return at }))
	id, _ := g.New()
	fmt.Println(g.Epoch().Time(id).Format(flake.RFC3339Milli))
	// Output: 2030-01-01T00:00:00.000Z
}

type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

func ExampleWithRandom() {
	// A fixed source, for tests only: production IDs need unpredictable bits.
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	g, _ := flake.NewGenerator(flake.WithRandom(zeroSource{}), flake.WithClock(func() time.Time { return at }))
	a, _ := g.New()
	b, _ := g.New()
	fmt.Println(a.Randomness(), b.Randomness())
	// Output: 0 1
}

func ExampleGenerator_NewWait() {
	g, _ := flake.NewGenerator(flake.WithSID(2), flake.WithEntropy(2)) // about one ID per millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var last flake.ID
	for range 20 {
		id, err := g.NewWait(ctx) // waits for the next millisecond when this one is used up
		if err != nil || id <= last {
			panic(err)
		}
		last = id
	}
	fmt.Println("20 increasing IDs")
	// Output: 20 increasing IDs
}

// A holder that hands its SID on records a ceiling above every ID it makes
// until it must renew; the next holder makes IDs only above it (this is what
// package sidlease does).
func ExampleGenerator_Ceiling() {
	g, _ := flake.NewGenerator(flake.WithSID(4))
	id, _ := g.New()
	ceiling := g.Ceiling(2 * time.Second)
	e := g.Epoch()
	fmt.Println(id < ceiling, e.Time(ceiling).Sub(e.Time(id)) > 2*time.Second)
	// Output: true true
}

func ExampleID_Format() {
	id := flake.MustParse("00EZJCRCB4650")
	fmt.Printf("%s %q %d %x %#X\n", id, id, id, id, id)
	// Output: 00EZJCRCB4650 "00EZJCRCB4650" 16873543940839584 3bf26618b218a0 0X3BF26618B218A0
}

func ExampleTrustedID() {
	// What PostgreSQL writes for SELECT json_agg(o) FROM orders o: bigints
	// as exact numbers, which ID refuses above 2^53.
	agg := []byte(`[{"id":95834049799701782,"total":4900}]`)
	var rows []struct {
		ID    flake.TrustedID `json:"id"`
		Total int             `json:"total"`
	}
	err := json.Unmarshal(agg, &rows)
	fmt.Println(rows[0].ID, rows[0].Total, err)

	var plain []struct {
		ID flake.ID `json:"id"`
	}
	err = json.Unmarshal(agg, &plain)
	fmt.Println(errors.Is(err, flake.ErrJSON))
	// Output:
	// 02N3RHXZV5H8P 4900 <nil>
	// true
}

// The prefix belongs to the type; the column stays a bigint. The marker is
// exported, so that generated code can name the type CustomerID stands for.
type CustomerPrefix struct{}

func (CustomerPrefix) Prefix() string { return "cus" }

type CustomerID = flake.Prefixed[CustomerPrefix]

func ExamplePrefixed() {
	id := CustomerID{ID: flake.MustParse("00EZJCRCB4650")}
	b, _ := json.Marshal(map[string]CustomerID{"customer": id})
	v, _ := id.Value()
	fmt.Println(id)
	fmt.Println(string(b))
	fmt.Println(v)
	// Output:
	// cus_00EZJCRCB4650
	// {"customer":"cus_00EZJCRCB4650"}
	// 16873543940839584
}

func ExampleParsePrefixed() {
	id, err := flake.ParsePrefixed[CustomerPrefix]("cus_00ezjcrcb4650")
	fmt.Println(id, err)
	_, err = flake.ParsePrefixed[CustomerPrefix]("ord_00EZJCRCB4650")
	fmt.Println(errors.Is(err, flake.ErrPrefix), err)
	// Output:
	// cus_00EZJCRCB4650 <nil>
	// true flake: wrong prefix: "ord_00EZJCRCB4650" has the prefix "ord", want "cus"
}

func ExampleGenerator_Epoch() {
	epoch, _ := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	g, _ := flake.NewGenerator(flake.WithEpoch(epoch))
	id, _ := g.NewAt(time.Date(2021, 6, 1, 12, 0, 0, 0, time.UTC))
	fmt.Println(g.Epoch())
	fmt.Println(g.Epoch().Time(id))
	// Output:
	// 2020-01-01T00:00:00.000Z
	// 2021-06-01 12:00:00 +0000 UTC
}
