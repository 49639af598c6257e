package main

import "testing"

func TestRatioPerRepetition(t *testing.T) {
	r := results{}
	for _, v := range [][2]float64{{10, 5}, {30, 10}, {20, 20}} {
		r.add("a", "ns/op", v[0])
		r.add("b", "ns/op", v[1])
	}
	q, ok := r.ratio("a", "b", "ns/op")
	if !ok || q.med != 2 || q.lo != 1 || q.hi != 3 || q.n != 3 {
		t.Fatalf("ratio = %+v, %v; want median 2 in 1–3 over 3", q, ok)
	}
	r.add("a", "ns/op", 1)
	if _, ok := r.ratio("a", "b", "ns/op"); ok {
		t.Fatal("a ratio of unequal repetitions")
	}
}

func TestCompareClaimsOnlyDisjointRanges(t *testing.T) {
	fast, slow, mid := stat{lo: 1, hi: 2}, stat{lo: 3, hi: 4}, stat{lo: 1.5, hi: 3.5}
	for _, c := range []struct {
		a, b   stat
		higher bool
		want   string
	}{
		{fast, slow, false, "faster"}, {slow, fast, false, "slower"},
		{fast, slow, true, "slower"}, {slow, fast, true, "faster"},
		{fast, mid, false, "within noise"}, {mid, slow, true, "within noise"},
	} {
		if got := compare(c.a, c.b, c.higher, "faster", "slower"); got != c.want {
			t.Errorf("compare(%v, %v, %v) = %s, want %s", c.a, c.b, c.higher, got, c.want)
		}
	}
	for _, c := range []struct {
		q      stat
		limit  float64
		atMost bool
		want   verdict
	}{
		{stat{lo: 1.1, hi: 1.19}, 1.2, true, met}, {stat{lo: 1.21, hi: 1.3}, 1.2, true, missed},
		{stat{lo: 1.1, hi: 1.3}, 1.2, true, noise}, {stat{lo: 0.9, hi: 1.1}, 0.9, false, met},
		{stat{lo: 0.5, hi: 0.8}, 0.9, false, missed},
	} {
		if got := against(c.q, c.limit, c.atMost); got != c.want {
			t.Errorf("against(%+v, %v, %v) = %s, want %s", c.q, c.limit, c.atMost, got, c.want)
		}
	}
}
