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

var meshRaise = regexp.MustCompile(`(?s)RAISE EXCEPTION 'ulid_flake mesh:.*?ERRCODE = '(\w+)'`)

// TestMeshRefusalsHaveTheirStates: each of version 5's mesh refusals
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
		{versionOwner, pgError{stateSID, "ulid_flake mesh: words alone"}, ErrSID},
		{versionOwner, pgError{"55000", "ulid_flake: the SID, in words alone"}, ErrEpoch},
		{versionOwner, pgError{"42501", "pg_file_settings"}, ErrEpoch},
		{versionOwner, pgError{stateNotAlone, "not alone"}, ErrForeignOwner},
		{versionCheckNode, pgError{stateMeshSIDHeld, "not version 4's"}, nil},
		{versionCheckNode, pgError{"55000", "none of 4's"}, nil},
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
