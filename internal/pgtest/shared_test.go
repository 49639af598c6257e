package pgtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/moby/moby/client"
)

// The servers are the shared, throwaway ones: named by image and settings,
// data on tmpfs, fsync off.
func TestServersAreShared(t *testing.T) {
	for _, s := range Servers(t) {
		if s.ctr == nil {
			t.Skip("servers of ULIDFLAKE_TEST_DATABASE_URL are not the harness's")
		}
		info, err := docker.cli.ContainerInspect(context.Background(), s.ctr.GetContainerID(), client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := sharedName(context.Background(), s.Image, compactSettings())
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimPrefix(info.Container.Name, "/"); got != want {
			t.Errorf("%s: container %q, want the shared %q", s.Name, got, want)
		}
		var fsync, dir string
		if err := s.admin.QueryRow(context.Background(), "SELECT current_setting('fsync'), current_setting('data_directory')").Scan(&fsync, &dir); err != nil {
			t.Fatal(err)
		}
		if fsync != "off" || !strings.HasPrefix(dir, sharedData+"/") {
			t.Errorf("%s: fsync %s, data in %s: want off, on the tmpfs %s", s.Name, fsync, dir, sharedData)
		}
	}
}

// A template is made once per server: preparing it again keeps it, and
// NewDB clones it.
func TestTemplateMadeOnce(t *testing.T) {
	ctx := context.Background()
	for _, s := range Servers(t) {
		var before, after uint32
		q := "SELECT oid FROM pg_database WHERE datname = $1"
		if err := s.admin.QueryRow(ctx, q, s.template).Scan(&before); err != nil {
			t.Fatalf("%s: template %s: %v", s.Name, s.template, err)
		}
		if err := s.prepareTemplate(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.admin.QueryRow(ctx, q, s.template).Scan(&after); err != nil {
			t.Fatal(err)
		}
		if before != after {
			t.Errorf("%s: template %s made again (oid %d, then %d)", s.Name, s.template, before, after)
		}
		db := s.NewDB(t)
		if err := db.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// The databases of a test process that was killed are dropped by the next
// one; those of live processes stay.
func TestLeftoversDropped(t *testing.T) {
	ctx := context.Background()
	const gone = 4194303 // above Linux's pid_max default: not a live process
	for _, s := range Servers(t) {
		own := s.NewDB(t)
		names := []string{fmt.Sprintf("t_%d_1", gone), fmt.Sprintf("tpl_0123abcd_b%d", gone)}
		for _, n := range names {
			if _, err := s.admin.Exec(ctx, "CREATE DATABASE "+n); err != nil {
				t.Fatal(err)
			}
		}
		s.dropLeftovers(ctx)
		for _, n := range append(names, own.Name) {
			var exists bool
			if err := s.admin.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", n).Scan(&exists); err != nil {
				t.Fatal(err)
			}
			if want := n == own.Name; exists != want {
				t.Errorf("%s: database %s exists: %v, want %v", s.Name, n, exists, want)
			}
		}
	}
}

// The Migrated template's key covers Migrate's Go side, read from the
// source tree: package migrations' code (the version table's DDL is
// there) and embedded SQL, and Migrated; not their tests.
func TestTemplateKeyReadsMigrationsSource(t *testing.T) {
	var b strings.Builder
	hashMigrationsSource(&b)
	for _, f := range []string{"migrate.go", "alone.sql", "pgsql.go", "pgtest.go"} {
		if !strings.Contains(b.String(), "\x00"+f+"\x00") {
			t.Errorf("the key does not read %s", f)
		}
	}
	if strings.Contains(b.String(), "_test.go\x00") {
		t.Error("the key reads a test file")
	}
}
