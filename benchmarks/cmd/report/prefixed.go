package main

// prefixed writes ulidflake's prefixed IDs against TypeID's Go
// implementation (benchmarks/prefixed_test.go): each ratio is TypeID's
// time over ulidflake's, repetition by repetition.
func (p *report) prefixed() {
	if !p.has("PrefixedParse/ulidflake", "ns/op") {
		return
	}
	p.f("## Prefixed IDs: `ulidflake.Prefixed` against TypeID\n\n")
	p.f("`cus_00EZJCRCB4650` (a 64-bit ID, the prefix in the Go type, stored as `bigint`) against TypeID's `cus_01h455vb4pex5vsknk084sn02q` "+
		"(go.jetify.com/typeid %s: a UUIDv7, 16 bytes or text in the database), each declared as its documentation says (`benchmarks/prefixed_test.go`). "+
		"The last column is TypeID's time over ulidflake's, per repetition: above 1, ulidflake is faster.\n\n", p.libs["go.jetify.com/typeid"])
	p.f("| operation | ulidflake | allocs | TypeID | allocs | TypeID / ulidflake |\n|---|---|---|---|---|---|\n")
	for _, op := range []struct{ bench, label string }{
		{"PrefixedParse", "parse"}, {"PrefixedString", "`String`"},
		{"PrefixedMarshalJSON", "`json.Marshal`"}, {"PrefixedUnmarshalJSON", "`json.Unmarshal`"},
	} {
		u, ok1 := p.r.stat(op.bench+"/ulidflake", "ns/op")
		t, ok2 := p.r.stat(op.bench+"/typeid", "ns/op")
		q, ok3 := p.q(op.bench+"/typeid", op.bench+"/ulidflake", "ns/op")
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		ua, _ := p.m(op.bench+"/ulidflake", "allocs/op")
		ta, _ := p.m(op.bench+"/typeid", "allocs/op")
		p.f("| %s | %s | %.0f | %s | %.0f | %s (%s) |\n", op.label, span(u, ns), ua, span(t, ns), ta, q.times(),
			compare(u, t, false, "ulidflake faster", "ulidflake slower"))
	}
	p.f("\n")
}
