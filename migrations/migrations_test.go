package migrations

import (
	"context"
	"errors"
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
		{[]Option{WithEpoch(epoch), WithTarget(versionFixedEpoch - 1)}, ErrEpoch},
		{[]Option{WithTarget(len(all) + 1)}, ErrTarget},
	} {
		if _, err := migrate(context.Background(), nil, all, tc.opts...); !errors.Is(err, tc.err) {
			t.Errorf("%d options: %v, want %v", len(tc.opts), err, tc.err)
		}
	}
}
