package openapiexample

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/pgxtype"
)

func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }

// call sends a request and decodes a JSON reply into out (when not nil);
// it returns the status and the body.
func call(t *testing.T, method, url, body string, out any) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
	return res.StatusCode, string(b)
}

// IDs round-trip through the generated API: made by the database, sent
// back in a path, a query parameter (?after=, which oapi-codegen's
// runtime would parse as a decimal integer without the ID's Bind method)
// and a JSON body; bad IDs get 400 with the parser's message.
func TestOpenAPIRoundTrip(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		cfg, err := pgxpool.ParseConfig(db.URL)
		if err != nil {
			t.Fatal(err)
		}
		cfg.AfterConnect = pgxtype.AfterConnect
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		if _, err := pool.Exec(ctx, Schema); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(NewHandler(Server{Pool: pool}))
		defer srv.Close()

		var ada, bob Customer
		if st, body := call(t, "POST", srv.URL+"/customers", `{"name":"Ada"}`, &ada); st != http.StatusCreated || ada.Id.IsZero() {
			t.Fatalf("create: %d %s", st, body)
		}
		if st, body := call(t, "POST", srv.URL+"/customers", `{"name":"Bob","referrer":"`+ada.Id.String()+`"}`, &bob); st != http.StatusCreated {
			t.Fatalf("create with referrer: %d %s", st, body)
		}
		if bob.Referrer == nil || *bob.Referrer != ada.Id {
			t.Fatalf("referrer: %+v", bob)
		}

		var got Customer
		if st, body := call(t, "GET", srv.URL+"/customers/"+bob.Id.String(), "", &got); st != http.StatusOK || got.Id != bob.Id || *got.Referrer != ada.Id {
			t.Fatalf("get: %d %s", st, body)
		}
		var page []Customer
		if st, body := call(t, "GET", srv.URL+"/customers", "", &page); st != http.StatusOK || len(page) != 2 || page[0].Id != ada.Id {
			t.Fatalf("list: %d %s", st, body)
		}
		if st, body := call(t, "GET", srv.URL+"/customers?after="+ada.Id.String(), "", &page); st != http.StatusOK || len(page) != 1 || page[0].Id != bob.Id {
			t.Fatalf("list after: %d %s", st, body)
		}
		// The lower-case form is the same ID.
		if st, body := call(t, "GET", srv.URL+"/customers/"+strings.ToLower(bob.Id.String()), "", &got); st != http.StatusOK || got.Id != bob.Id {
			t.Fatalf("get lower case: %d %s", st, body)
		}

		for url, want := range map[string]string{
			"/customers/123":           "wrong length",
			"/customers/000000000000U": "invalid character",
			"/customers?after=12345":   "wrong length", // a decimal is not read as an int64
			"/customers/8000000000000": "value above",
		} {
			if st, body := call(t, "GET", srv.URL+url, "", nil); st != http.StatusBadRequest || !strings.Contains(body, want) {
				t.Errorf("GET %s: %d %q, want 400 saying %q", url, st, body, want)
			}
		}
		if st, body := call(t, "POST", srv.URL+"/customers", `{"name":"C","referrer":95834049799701782}`, nil); st != http.StatusBadRequest || !strings.Contains(body, "2^53") {
			t.Errorf("a referrer as a large number: %d %q", st, body)
		}
		for _, id := range []string{"00EZJCRCB4650", "0000000000000"} {
			if st, _ := call(t, "GET", srv.URL+"/customers/"+id, "", nil); st != http.StatusNotFound {
				t.Errorf("unknown ID %s: %d", id, st)
			}
		}
		for body, want := range map[string]int{
			`{}`: http.StatusBadRequest,
			`{"name":"C","referrer":"0000000000000"}`: http.StatusBadRequest,
			`{"name":"C","referrer":"00EZJCRCB4650"}`: http.StatusUnprocessableEntity,
		} {
			if st, msg := call(t, "POST", srv.URL+"/customers", body, nil); st != want {
				t.Errorf("POST %s: %d %q, want %d", body, st, msg, want)
			}
		}
	})
}
