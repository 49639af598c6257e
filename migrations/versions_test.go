package migrations

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The tests here fail when a step of CONTRIBUTING.md's "Adding a
// migration" is forgotten.

var (
	createdFunction = regexp.MustCompile(`CREATE (?:OR REPLACE )?FUNCTION (?:%+(?:\d+\$)?I\.)?(ulid_flake\w*)\(|ulid_flake_create\([^,]+, '(ulid_flake\w*)\(`)
	createdObject   = regexp.MustCompile(`CREATE (TABLE|SEQUENCE|DOMAIN|TYPE) (ulid_flake\w*)`)
)

// created lists the functions, and the relations and types, that an up
// file creates.
func created(up string) (functions, others []string) {
	for _, m := range createdFunction.FindAllStringSubmatch(up, -1) {
		functions = append(functions, m[1]+m[2])
	}
	for _, m := range createdObject.FindAllStringSubmatch(up, -1) {
		others = append(others, m[2])
	}
	return functions, others
}

// TestVersionTable: every version has one entry in versions, in order,
// with what it adds and a fingerprint of objects its up file creates.
func TestVersionTable(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != len(all) {
		t.Fatalf("versions has %d entries and sql/ %d versions: give each version one entry (CONTRIBUTING.md, \"Adding a migration\")", len(versions), len(all))
	}
	for i, v := range versions {
		if v.number != i+1 || v.adds == "" || len(v.fingerprint) == 0 {
			t.Errorf("versions[%d]: number %d, adds %q, %d fingerprint objects: want number %d, what it adds, and a fingerprint", i, v.number, v.adds, len(v.fingerprint), i+1)
			continue
		}
		fns, others := created(all[i].Up)
		for _, o := range v.fingerprint {
			name, _, _ := strings.Cut(o.name, "(")
			if !slices.Contains(fns, name) && !slices.Contains(others, name) {
				t.Errorf("version %d: fingerprint %s %s is not created by %03d_%s.up.sql", v.number, o.kind, o.name, v.number, all[i].Name)
			}
		}
	}
}

// TestEveryFunctionIsOwnedOrExempt: each function an up file creates first
// is in that version's owns (Migrate checks its owner) or its exempt list
// (with the reason it need not), and every name there is created.
func TestEveryFunctionIsOwnedOrExempt(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, m := range all[:min(len(all), len(versions))] {
		v := versions[i]
		fns, others := created(m.Up)
		for _, f := range fns {
			if seen[f] {
				continue
			}
			seen[f] = true
			if !slices.Contains(v.owns, fn(f)) && v.exempt[f] == "" {
				t.Errorf("%03d_%s.up.sql creates %s, which version %d's entry neither owns nor exempts", m.Version, m.Name, f, v.number)
			}
		}
		for _, o := range v.owns {
			if !slices.Contains(fns, o.name) && !slices.Contains(others, o.name) {
				t.Errorf("version %d owns %s %s, which %03d_%s.up.sql does not create", v.number, o.kind, o.name, m.Version, m.Name)
			}
		}
		for f := range v.exempt {
			if !slices.Contains(fns, f) {
				t.Errorf("version %d exempts %s, which %03d_%s.up.sql does not create", v.number, f, m.Version, m.Name)
			}
		}
	}
}

var (
	guardList   = regexp.MustCompile(`p\.proname IN \(([^)]*)\)`)
	guardedBody = regexp.MustCompile(`(?s)\$body\$(.*?)\$body\$`)
	// lookup matches what names a function without calling it: a look-up
	// in the catalog, a CREATE, a HINT that tells the operator what to run.
	lookup       = regexp.MustCompile(`to_regprocedure\(format\('[^']*'|FUNCTION %+(?:\d+\$)?I\.ulid_flake\w*\(|HINT = (?:format\()?'(?:[^']|'')*'`)
	calledByName = regexp.MustCompile(`%+(?:\d+\$)?I\.(ulid_flake\w*)\(`)
)

// TestGuardListsWhatTheOwnerFunctionsCall: the guard of the owner's
// functions (the newest up file that defines it) lists exactly the
// guarded functions of every version, and every function those bodies
// call by name is among them. A version that guards a new function
// defines the guard again.
func TestGuardListsWhatTheOwnerFunctionsCall(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	newest := -1
	for i, m := range all {
		if strings.Contains(m.Up, "<<guard>>") {
			newest = i
		}
	}
	if newest < versionOwner-1 {
		t.Fatalf("no up file from version %d on defines the guard", versionOwner)
	}
	m := all[newest]
	list := guardList.FindStringSubmatch(m.Up)
	if list == nil {
		t.Fatalf("%03d_%s.up.sql: no p.proname IN (...) in the guard", m.Version, m.Name)
	}
	var listed, want []string
	for _, s := range strings.Split(list[1], ",") {
		listed = append(listed, strings.Trim(strings.TrimSpace(s), "'"))
	}
	for _, v := range versions {
		want = append(want, v.guarded...)
	}
	slices.Sort(listed)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("%03d_%s.up.sql's guard lists %v; the versions' guarded say %v", m.Version, m.Name, listed, want)
	}
	for _, b := range guardedBody.FindAllStringSubmatch(m.Up, -1) {
		if !strings.Contains(b[1], "@guard@") {
			continue
		}
		for _, c := range calledByName.FindAllStringSubmatch(lookup.ReplaceAllString(b[1], ""), -1) {
			if !slices.Contains(want, c[1]) {
				t.Errorf("%03d_%s.up.sql: a guarded body calls %s by name, which no version's guarded lists", m.Version, m.Name, c[1])
			}
		}
	}
}

var meshRaise = regexp.MustCompile(`(?s)RAISE EXCEPTION 'ulid_flake mesh:.*?ERRCODE = '(\w+)'`)

// TestMeshRefusalsHaveTheirStates: each of version 8's mesh refusals
// raises a SQLSTATE of its own, the one meshStates knows.
func TestMeshRefusalsHaveTheirStates(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, m := range meshRaise.FindAllStringSubmatch(all[versionOwner-1].Up, -1) {
		codes = append(codes, m[1])
	}
	var want []string
	for c := range meshStates {
		want = append(want, c)
	}
	slices.Sort(codes)
	slices.Sort(want)
	if !slices.Equal(codes, want) {
		t.Errorf("the mesh's RAISEs use %v, want each of %v once", codes, want)
	}
}

// pgError stands for the server's error as a driver returns it.
type pgError struct{ code, msg string }

func (e pgError) Error() string    { return e.msg }
func (e pgError) SQLState() string { return e.code }

// TestClassifyReadsSQLStateOnly: a refusal's sentinel comes from its
// version's SQLSTATE, never from its message.
func TestClassifyReadsSQLStateOnly(t *testing.T) {
	for _, tc := range []struct {
		version int
		err     error
		want    error
	}{
		{versionOwner, pgError{stateMeshCopy, "a copy"}, ErrMesh},
		{versionOwner, pgError{stateMeshSIDHeld, "held"}, ErrMesh},
		{versionOwner, pgError{stateMeshStateSub, "subscribed"}, ErrMesh},
		{versionOwner, pgError{stateMeshReplicated, "replicated"}, ErrMesh},
		{versionOwner, pgError{"55000", "ulid_flake mesh: words alone"}, ErrSID},
		{versionOwner, pgError{"42501", "owner"}, ErrForeignOwner},
		{versionFixedEpoch, pgError{"55000", "epoch"}, ErrEpoch},
		{versionFixedEpoch, pgError{"42501", "pg_file_settings"}, ErrEpoch},
		{versionFixedEpoch, pgError{stateMeshSIDHeld, "not version 7's"}, nil},
		{5, pgError{"55000", "none of 5's"}, nil},
		{versionOwner, errors.New("no SQLSTATE"), nil},
		{len(versions) + 1, pgError{"55000", "a version this build lacks"}, nil},
	} {
		got := classify(tc.version, fmt.Errorf("exec: %w", tc.err))
		if !errors.Is(got, tc.err) {
			t.Errorf("version %d, %v: %v does not wrap the server's error", tc.version, tc.err, got)
		}
		for _, s := range []error{ErrMesh, ErrSID, ErrEpoch, ErrForeignOwner} {
			if errors.Is(got, s) != (s == tc.want) {
				t.Errorf("version %d, %v: errors.Is(%v, %v) = %v", tc.version, tc.err, got, s, !(s == tc.want))
			}
		}
	}
}

// TestNewestInstalled: the ladder takes the newest version whose
// fingerprint objects all exist.
func TestNewestInstalled(t *testing.T) {
	var n int
	for _, v := range versions {
		n += len(v.fingerprint)
	}
	upTo := func(last int) []bool { // the fingerprints of versions 1..last exist
		exists := make([]bool, 0, n)
		for _, v := range versions {
			for range v.fingerprint {
				exists = append(exists, v.number <= last)
			}
		}
		return exists
	}
	for last := 0; last <= len(versions); last++ {
		if got := newestInstalled(upTo(last)); got != last {
			t.Errorf("versions 1..%d installed: read %d", last, got)
		}
	}
	half := upTo(len(versions))
	half[n-1] = false // one of the newest version's objects is missing
	if got := newestInstalled(half); got != len(versions)-1 {
		t.Errorf("the newest version's fingerprint incomplete: read %d, want %d", got, len(versions)-1)
	}
	if got := newestInstalled(nil); got != 0 {
		t.Errorf("no answers: read %d", got)
	}
}
