package main

import (
	"bytes"
	"database/sql"
	"os"
	"slices"
	"strings"
	"testing"
)

// nodeWith is an install on its own server, URL u, with SID sid (-1: none).
func nodeWith(u int, sid int64, epochMS int64) node {
	return node{url: u, database: "app", system: "7" + string(rune('0'+u)), started: "t", databaseID: "5",
		schema: "public", sid: sql.NullInt64{Int64: sid, Valid: sid >= 0}, epochMS: epochMS}
}

// overlaps refuses one SID on two databases, stand-alone IDs (no SID, or a
// DEFAULT ulid_flake()) on any of two, and two epochs, naming the pair and
// the fix; distinct SIDs under one epoch pass, and one database given
// twice is no pair.
func TestNodesOverlaps(t *testing.T) {
	const epoch = 1704067200000
	mixed := nodeWith(2, 2, epoch)
	mixed.standAlone = []string{"public.orders.id"}
	same := nodeWith(1, 1, epoch)
	same.url = 2
	for _, tc := range []struct {
		name  string
		nodes []node
		want  []string // a substring of each problem, in order
	}{
		{"distinct SIDs", []node{nodeWith(1, 1, epoch), nodeWith(2, 2, epoch), nodeWith(3, 0, epoch)}, nil},
		{"one database twice", []node{nodeWith(1, 1, epoch), same}, nil},
		{"one SID", []node{nodeWith(1, 3, epoch), nodeWith(2, 3, epoch)}, []string{"URL 1 (database app, schema public) and URL 2 (database app, schema public): both make IDs with SID 3; give one of them a SID"}},
		{"stand-alone on both", []node{nodeWith(1, -1, epoch), nodeWith(2, -1, epoch)}, []string{"URL 1 has no SID, URL 2 has no SID: stand-alone IDs"}},
		{"stand-alone on one", []node{nodeWith(1, 1, epoch), nodeWith(2, -1, epoch)}, []string{"URL 2 has no SID: stand-alone"}},
		{"a stand-alone default", []node{nodeWith(1, 1, epoch), mixed}, []string{"URL 2 has DEFAULT ulid_flake() (no SID) on public.orders.id"}},
		{"two epochs", []node{nodeWith(1, 1, epoch), nodeWith(2, 2, 1420070400000)}, []string{"epochs 2024-01-01T00:00:00.000Z and 2015-01-01T00:00:00.000Z"}},
		{"every pair", []node{nodeWith(1, 1, epoch), nodeWith(2, 1, epoch), nodeWith(3, 1, epoch)}, []string{"URL 1 (", "URL 1 (", "URL 2 ("}},
	} {
		got := overlaps(tc.nodes)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d problems, want %d: %q", tc.name, len(got), len(tc.want), got)
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: %q does not say %q", tc.name, got[i], w)
			}
			if !strings.Contains(got[i], "ulid_flake_set_sid") && !strings.Contains(got[i], "ulid_flake_set_epoch") {
				t.Errorf("%s: %q names no fix", tc.name, got[i])
			}
		}
	}
}

// Without a URL, or with a bad flag, nodes is bad usage: exit 2.
func TestNodesUsageExitsTwo(t *testing.T) {
	for _, args := range [][]string{{"nodes"}, {"nodes", "-timeout", "soon", "postgres://x@127.0.0.1:1/x"}, {"nodes", "-sid", "1"},
		{"nodes", "-timeout", "0s", "postgres://x@127.0.0.1:1/x"}} {
		if code, _, errOut := runCLI("", args...); code != 2 || !strings.Contains(errOut, "nodes") {
			t.Errorf("%q: exit %d: %s", args, code, errOut)
		}
	}
}

// A database that cannot be reached is named by its place on the command
// line, without the URL's password: exit 1.
func TestNodesUnreachableExitsOne(t *testing.T) {
	code, _, errOut := runCLI("", "nodes", "postgres://x:secret@127.0.0.1:1/x?connect_timeout=5")
	if code != 1 || !strings.Contains(errOut, "URL 1: cannot connect") || strings.Contains(errOut, "secret") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// nodes -h shows its line of usage and exactly the flags it names.
func TestNodesHelp(t *testing.T) {
	var out bytes.Buffer
	helpOut = &out
	defer func() { helpOut = os.Stdout }()
	code := run([]string{"nodes", "-h"}, strings.NewReader(""), &out, &out)
	help := out.String()
	if code != 0 || !strings.Contains(help, "\n  ulidflake nodes [-timeout 10s] URL...") {
		t.Fatalf("exit %d:\n%s", code, help)
	}
	if named, defined := usageFlags("nodes"), helpFlags(help); !slices.Equal(named, defined) {
		t.Errorf("the usage names the flags %q, the command defines %q", named, defined)
	}
}

// A name with a tab or a newline is quoted, so that it keeps to its cell
// and its line; other names are shown as they are.
func TestNodesPrintable(t *testing.T) {
	for in, want := range map[string]string{"shop": "shop", "ünï🦀 x": "ünï🦀 x", "new\nline": `"new\nline"`, "a\tb": `"a\tb"`} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %s, want %s", in, got, want)
		}
	}
}
