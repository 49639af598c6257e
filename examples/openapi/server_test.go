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

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/openapi/idtype"
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

// serve starts the API on a fresh database and returns its URL and a
// generated client.
func serve(t *testing.T, db *pgtest.DB) (string, *ClientWithResponses) {
	t.Helper()
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
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(ctx, Schema); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewHandler(Server{Pool: pool}))
	t.Cleanup(srv.Close)
	client, err := NewClientWithResponses(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return srv.URL, client
}

// Prefixed IDs round-trip between the generated client and the generated
// server: made by the database, sent back in a path, a query parameter
// and a JSON body as cus_ and the 13 characters; the first page of the
// list is the typed ?after= left out.
func TestOpenAPIRoundTrip(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		url, client := serve(t, db)
		create := func(in NewCustomer) Customer {
			t.Helper()
			res, err := client.CreateCustomerWithResponse(ctx, in)
			if err != nil || res.JSON201 == nil {
				t.Fatalf("create %+v: %v %v %s", in, err, res.Status(), res.Body)
			}
			return *res.JSON201
		}
		ada := create(NewCustomer{Name: "Ada"})
		bob := create(NewCustomer{Name: "Bob", Referrer: &ada.Id})
		if bob.Referrer == nil || *bob.Referrer != ada.Id || ada.Id.IsZero() {
			t.Fatalf("created %+v %+v", ada, bob)
		}

		got, err := client.GetCustomerWithResponse(ctx, bob.Id)
		if err != nil || got.JSON200 == nil || got.JSON200.Id != bob.Id || *got.JSON200.Referrer != ada.Id {
			t.Fatalf("get: %v %s", err, got.Body)
		}
		if !strings.Contains(string(got.Body), `"id":"`+bob.Id.String()+`"`) || !strings.HasPrefix(bob.Id.String(), "cus_") {
			t.Fatalf("get: %s, want the ID as %s", got.Body, bob.Id)
		}
		zero := CustomerID{}
		for _, tc := range []struct {
			after *CustomerID
			want  []CustomerID
		}{
			{nil, []CustomerID{ada.Id, bob.Id}}, // the first page
			{&zero, []CustomerID{ada.Id, bob.Id}},
			{&ada.Id, []CustomerID{bob.Id}},
			{&bob.Id, nil},
		} {
			res, err := client.ListCustomersWithResponse(ctx, &ListCustomersParams{After: tc.after})
			if err != nil || res.JSON200 == nil || !samePage(*res.JSON200, tc.want) {
				t.Errorf("list after %v: %v %s, want %v", tc.after, err, res.Body, tc.want)
			}
		}

		// The prefix is case-sensitive, the 13 characters are not.
		if st, body := call(t, "GET", url+"/customers/cus_"+strings.ToLower(bob.Id.ID.String()), "", nil); st != http.StatusOK || !strings.Contains(body, bob.Id.String()) {
			t.Errorf("get lower case: %d %s", st, body)
		}
		for _, id := range []string{"cus_00EZJCRCB4650", "cus_0000000000000"} {
			if st, _ := call(t, "GET", url+"/customers/"+id, "", nil); st != http.StatusNotFound {
				t.Errorf("unknown ID %s: %d", id, st)
			}
		}
		for body, want := range map[string]int{
			`{}`: http.StatusBadRequest,
			`{"name":"C","referrer":"cus_0000000000000"}`: http.StatusBadRequest,
			`{"name":"C","referrer":"cus_00EZJCRCB4650"}`: http.StatusUnprocessableEntity,
		} {
			if st, msg := call(t, "POST", url+"/customers", body, nil); st != want {
				t.Errorf("POST %s: %d %q, want %d", body, st, msg, want)
			}
		}
	})
}

func samePage(got []Customer, want []CustomerID) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Id != want[i] {
			return false
		}
	}
	return true
}

// A bad ID in the path, the query and the body gets 400 with the
// library's message (after the parameter's name): a decimal, another
// prefix, no prefix, a bad character.
func TestOpenAPIBadIDs(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		url, _ := serve(t, db)
		const good = "00EZJCRCB4650"
		for _, in := range []string{"16873543940839584", "ord_" + good, good, "cus_" + good[1:], "cus_00EZJCRCB465U", "cus_8000000000000"} {
			_, perr := ulidflake.ParsePrefixed[idtype.CustomerPrefix](in)
			if perr == nil {
				t.Fatalf("%s parses", in)
			}
			lit, _ := json.Marshal(in)
			for _, tc := range []struct{ method, path, body, want string }{
				{"GET", "/customers/" + in, "", "parameter id: " + perr.Error()},
				{"GET", "/customers?after=" + in, "", "parameter after: " + perr.Error()},
				{"POST", "/customers", `{"name":"C","referrer":` + string(lit) + `}`, perr.Error()},
			} {
				if st, body := call(t, tc.method, url+tc.path, tc.body, nil); st != http.StatusBadRequest || body != tc.want+"\n" {
					t.Errorf("%s %s %s: %d\n%s\nwant 400 and\n%s", tc.method, tc.path, tc.body, st, body, tc.want)
				}
			}
		}
		// A number is no prefixed ID in JSON.
		if st, body := call(t, "POST", url+"/customers", `{"name":"C","referrer":16873543940839584}`, nil); st != http.StatusBadRequest || !strings.HasPrefix(body, "flake: invalid JSON ID: ") {
			t.Errorf("a referrer as a number: %d %q", st, body)
		}
	})
}
