package migrations

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ulidflake/ulidflake/flake"
)

func TestEmbeddedSetIsComplete(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range all {
		if m.Version != i+1 || m.Up == "" || m.Down == "" {
			t.Fatalf("migration %d: %+v", i, m.Version)
		}
	}
}

func TestLoadChecksTheSet(t *testing.T) {
	file := &fstest.MapFile{Data: []byte("SELECT 1;")}
	for _, tc := range []struct {
		files []string
		err   error
		want  string
	}{
		{[]string{"001_a.up.sql", "001_a.down.sql", "003_c.up.sql", "003_c.down.sql"}, ErrMissing, "version 2"},
		{[]string{"001_a.up.sql"}, ErrMissing, "no down file"},
		{[]string{"001_a.up.sql", "001_a.down.sql", "01_a.up.sql"}, ErrDuplicate, "two up files"},
		{[]string{"001_a.up.sql", "001_a.down.sql", "001_b.up.sql"}, ErrDuplicate, "both a and b"},
		{[]string{"001_a.sql"}, nil, "not named NNN_name.up.sql"},
	} {
		fsys := fstest.MapFS{}
		for _, f := range tc.files {
			fsys["sql/"+f] = file
		}
		_, err := load(fsys, "sql")
		if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %v %q", tc.files, err, tc.err, tc.want)
		}
	}
}

// TestOptionsRefusedBeforeAnyStatement: a Direction that is neither up
// nor down, and WithEpoch with a Down, are refused before Migrate
// reaches the database (there is none here).
func TestOptionsRefusedBeforeAnyStatement(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	epoch := flake.DefaultEpoch()
	for _, tc := range []struct {
		opts []Option
		err  error
	}{
		{[]Option{WithDirection("sideways")}, ErrTarget},
		{[]Option{WithEpoch(epoch), WithDirection(DirectionDown)}, ErrEpoch},
		{[]Option{WithEpoch(epoch), WithTarget(versionOwner - 1)}, ErrEpoch},
		{[]Option{WithTarget(len(all) + 1)}, ErrTarget},
	} {
		if _, err := migrate(context.Background(), nil, all, tc.opts...); !errors.Is(err, tc.err) {
			t.Errorf("%d options: %v, want %v", len(tc.opts), err, tc.err)
		}
	}
}

// TestEveryFileFromVersion5ChecksTheSchema: version 5 creates
// ulid_flake_alone(schema) with the body Migrate runs before each step
// (alone.sql), and every file from version 5 on, up and down, calls it
// right after pinning search_path, before anything else runs.
func TestEveryFileFromVersion5ChecksTheSchema(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	const pin = "SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()), true);\n"
	const call = "SELECT ulid_flake_alone(pg_catalog.current_schema());\n"
	create := "CREATE FUNCTION ulid_flake_alone(schema name) RETURNS void LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $alone$\nDECLARE\n" +
		aloneSQL + "$alone$;\nREVOKE EXECUTE ON FUNCTION ulid_flake_alone(name) FROM PUBLIC;\n"
	if !strings.Contains(all[4].Up, create) {
		t.Error("version 5's up does not create ulid_flake_alone with the body of alone.sql")
	}
	for _, m := range all[4:] {
		for dir, body := range map[string]string{"up": strings.Replace(m.Up, create, "", 1), "down": m.Down} {
			i := strings.Index(body, pin)
			rest := body[i+len(pin):]
			j := strings.Index(rest, call)
			if i < 0 || j < 0 || strings.Contains(stripComments(rest[:j]), ";") {
				t.Errorf("version %d %s: does not call ulid_flake_alone right after pinning search_path", m.Version, dir)
			}
		}
	}
}

// stripComments drops the -- comments of sql, so that what remains is
// statements.
func stripComments(sql string) string {
	var b strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// TestGooseFSIsAnFS: GooseFS passes fstest.TestFS (open, read, stat and
// list its files as io/fs requires) with one file per version.
func TestGooseFSIsAnFS(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range all {
		names = append(names, fmt.Sprintf("%03d_%s.sql", m.Version, m.Name))
	}
	if err := fstest.TestFS(GooseFS(), names...); err != nil {
		t.Fatal(err)
	}
}
