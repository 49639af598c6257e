package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m, nil) }

// check runs the quickstart against url and checks what it prints.
func check(t *testing.T, url string) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, url); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	ids := regexp.MustCompile(`(?m)^\s+(?:customer|order) +([0-9A-Z]{13}) `).FindAllStringSubmatch(text, -1)
	if len(ids) != 9 { // 3 customers, 5 orders, and the order found in the time window
		t.Fatalf("want 9 ID lines, got %d:\n%s", len(ids), text)
	}
	var prev ulidflake.ID
	for _, m := range ids {
		id, err := ulidflake.Parse(m[1])
		if err != nil || id.IsZero() {
			t.Fatalf("printed ID %q: %v", m[1], err)
		}
		if strings.Contains(m[0], "customer") {
			if id <= prev {
				t.Fatalf("customers not in creation order: %s after %s", id, prev)
			}
			prev = id
		}
	}
	if !strings.Contains(text, "  order ") || !strings.Contains(text, "monitor\n") {
		t.Fatalf("the time-window query did not find Grace's order:\n%s", text)
	}
	var c struct {
		ID     string `json:"id"`
		Orders []struct {
			CustomerID string `json:"customer_id"`
		} `json:"orders"`
	}
	if err := json.Unmarshal([]byte(text[strings.Index(text, "{"):]), &c); err != nil || len(c.ID) != 13 || c.Orders[0].CustomerID != c.ID {
		t.Fatalf("JSON %+v, %v", c, err)
	}
}

// On SQLite the quickstart runs in memory and leaves nothing in the
// temporary directory.
func TestQuickstartSQLite(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	check(t, "")
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Fatalf("the quickstart left %d entries in the temporary directory, first %s", len(left), left[0].Name())
	}
}

func TestQuickstartPostgres(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) { check(t, db.URL) })
}
