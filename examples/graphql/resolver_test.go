package graphqlexample

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/graphql/idtype"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/pgxtype"
)

func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }

// reply is a GraphQL response.
type reply struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

// query posts a GraphQL query with variables and decodes its data into
// out; it returns the errors' messages.
func query(t *testing.T, url, q string, vars map[string]any, out any) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	res, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var r reply
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, e := range r.Errors {
		msgs = append(msgs, e.Message)
	}
	if len(msgs) == 0 && out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatalf("%s: %v", r.Data, err)
		}
	}
	return strings.Join(msgs, "; ")
}

// customer is a Customer as a client decodes it: a JSON ID without the
// cus_ prefix would not decode.
type customer struct {
	ID       idtype.CustomerID  `json:"id"`
	Name     string             `json:"name"`
	Referrer *idtype.CustomerID `json:"referrer"`
}

// serve starts the GraphQL server on a fresh database.
func serve(t *testing.T, db *pgtest.DB) *httptest.Server {
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
	srv := httptest.NewServer(NewHandler(&Resolver{Pool: pool}))
	t.Cleanup(srv.Close)
	return srv
}

const create = `mutation($name: String!, $ref: CustomerID) { createCustomer(name: $name, referrer: $ref) { id name referrer } }`

// Prefixed IDs round-trip through gqlgen's CustomerID scalar: made by the
// database, read in results as cus_ and the 13 characters, sent back as
// arguments (variables and literals); the first page of customers is the
// typed argument left out or null.
func TestGraphQLRoundTrip(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		srv := serve(t, db)
		var created struct{ CreateCustomer customer }
		if msg := query(t, srv.URL, create, map[string]any{"name": "Ada"}, &created); msg != "" || created.CreateCustomer.ID.IsZero() {
			t.Fatalf("create: %s %+v", msg, created)
		}
		ada := created.CreateCustomer.ID
		if msg := query(t, srv.URL, create, map[string]any{"name": "Bob", "ref": ada.String()}, &created); msg != "" || *created.CreateCustomer.Referrer != ada {
			t.Fatalf("create with referrer: %s %+v", msg, created)
		}
		bob := created.CreateCustomer.ID
		if !strings.HasPrefix(bob.String(), "cus_") {
			t.Fatalf("bob's ID %s", bob)
		}

		var one struct{ Customer *customer }
		if msg := query(t, srv.URL, `query { customer(id: "`+bob.String()+`") { id name referrer } }`, nil, &one); msg != "" || one.Customer.ID != bob || *one.Customer.Referrer != ada {
			t.Fatalf("customer by literal: %s %+v", msg, one)
		}
		if msg := query(t, srv.URL, `query { customer(id: "cus_0000000000000") { id } }`, nil, &one); msg != "" || one.Customer != nil {
			t.Fatalf("the zero ID: %s %+v", msg, one)
		}

		const page = `query($after: CustomerID) { customers(after: $after) { id } }`
		for _, tc := range []struct {
			after any // the variable; absent when nil
			want  []idtype.CustomerID
		}{
			{nil, []idtype.CustomerID{ada, bob}}, // the first page
			{"cus_0000000000000", []idtype.CustomerID{ada, bob}},
			{ada.String(), []idtype.CustomerID{bob}},
			{bob.String(), nil},
		} {
			vars := map[string]any{}
			if tc.after != nil {
				vars["after"] = tc.after
			}
			var got struct{ Customers []customer }
			if msg := query(t, srv.URL, page, vars, &got); msg != "" || !samePage(got.Customers, tc.want) {
				t.Errorf("customers after %v: %s %+v, want %v", tc.after, msg, got, tc.want)
			}
		}
		var got struct{ Customers []customer }
		if msg := query(t, srv.URL, `{ customers(after: null) { id } }`, nil, &got); msg != "" || !samePage(got.Customers, []idtype.CustomerID{ada, bob}) {
			t.Errorf("customers after null: %s %+v", msg, got)
		}

		for _, tc := range []struct {
			vars map[string]any
			want string
		}{
			{map[string]any{"name": "C", "ref": "cus_0000000000000"}, "zero ID names no customer"},
			{map[string]any{"name": "C", "ref": "cus_00EZJCRCB4650"}, "no such customer"},
		} {
			if msg := query(t, srv.URL, create, tc.vars, nil); !strings.Contains(msg, tc.want) {
				t.Errorf("create %v: %q, want an error saying %q", tc.vars, msg, tc.want)
			}
		}
	})
}

func samePage(got []customer, want []idtype.CustomerID) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].ID != want[i] {
			return false
		}
	}
	return true
}

// A bad ID, as a literal or a variable, in each argument, is refused with
// the library's message: a decimal, another prefix, no prefix, and a
// number (which gqlgen gives as an int64 literal or a json.Number).
func TestGraphQLBadIDs(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		srv := serve(t, db)
		const good = "00EZJCRCB4650"
		type field struct{ literal, variable string } // with %s for the value
		fields := []field{
			{`{ customer(id: %s) { id } }`, `query($v: CustomerID!) { customer(id: $v) { id } }`},
			{`{ customers(after: %s) { id } }`, `query($v: CustomerID) { customers(after: $v) { id } }`},
			{`mutation { createCustomer(name: "C", referrer: %s) { id } }`, `mutation($v: CustomerID) { createCustomer(name: "C", referrer: $v) { id } }`},
		}
		for _, in := range []string{"16873543940839584", "ord_" + good, good, "cus_" + good[1:], "cus_00EZJCRCB465U"} {
			_, perr := ulidflake.ParsePrefixed[idtype.CustomerPrefix](in)
			if perr == nil {
				t.Fatalf("%s parses", in)
			}
			for _, f := range fields {
				lit, _ := json.Marshal(in)
				for q, vars := range map[string]map[string]any{
					fmt.Sprintf(f.literal, lit): nil,
					f.variable:                  {"v": in},
				} {
					if msg := query(t, srv.URL, q, vars, nil); !strings.Contains(msg, perr.Error()) {
						t.Errorf("%s %v:\n%s\nwant the library's\n%s", q, vars, msg, perr)
					}
				}
			}
		}
		const number = `flake: cannot scan into an ID: GraphQL gave the number %s, not a string: send the ID as a string, "cus_" followed by 13 characters`
		for _, f := range fields {
			for q, vars := range map[string]map[string]any{
				fmt.Sprintf(f.literal, "16873543940839584"): nil,
				f.variable: {"v": json.Number("16873543940839584")},
			} {
				if msg, want := query(t, srv.URL, q, vars, nil), fmt.Sprintf(number, "16873543940839584"); !strings.Contains(msg, want) {
					t.Errorf("%s %v:\n%s\nwant\n%s", q, vars, msg, want)
				}
			}
		}
	})
}
