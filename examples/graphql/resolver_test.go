package graphqlexample

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake"
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

// IDs round-trip through gqlgen's FlakeID scalar: made by the database,
// sent back as arguments (variables and literals) and read in results as
// the 13-character string; a number or a bad string is refused with the
// parser's message.
func TestGraphQLRoundTrip(t *testing.T) {
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
		srv := httptest.NewServer(NewHandler(&Resolver{Pool: pool}))
		defer srv.Close()

		type customer struct {
			ID       ulidflake.ID  `json:"id"`
			Name     string        `json:"name"`
			Referrer *ulidflake.ID `json:"referrer"`
		}
		var created struct{ CreateCustomer customer }
		const create = `mutation($name: String!, $ref: FlakeID) { createCustomer(name: $name, referrer: $ref) { id name referrer } }`
		if msg := query(t, srv.URL, create, map[string]any{"name": "Ada"}, &created); msg != "" || created.CreateCustomer.ID.IsZero() {
			t.Fatalf("create: %s %+v", msg, created)
		}
		ada := created.CreateCustomer.ID
		if msg := query(t, srv.URL, create, map[string]any{"name": "Bob", "ref": ada.String()}, &created); msg != "" || *created.CreateCustomer.Referrer != ada {
			t.Fatalf("create with referrer: %s %+v", msg, created)
		}
		bob := created.CreateCustomer.ID

		var one struct{ Customer *customer }
		if msg := query(t, srv.URL, `query { customer(id: "`+bob.String()+`") { id name referrer } }`, nil, &one); msg != "" || one.Customer.ID != bob || *one.Customer.Referrer != ada {
			t.Fatalf("customer by literal: %s %+v", msg, one)
		}
		var page struct{ Customers []customer }
		if msg := query(t, srv.URL, `query($after: FlakeID) { customers(after: $after) { id } }`, map[string]any{"after": ada.String()}, &page); msg != "" || len(page.Customers) != 1 || page.Customers[0].ID != bob {
			t.Fatalf("customers after: %s %+v", msg, page)
		}
		if msg := query(t, srv.URL, `query { customers { id } }`, nil, &page); msg != "" || len(page.Customers) != 2 {
			t.Fatalf("customers: %s %+v", msg, page)
		}
		if msg := query(t, srv.URL, `query { customer(id: "0000000000000") { id } }`, nil, &one); msg != "" || one.Customer != nil {
			t.Fatalf("the zero ID: %s %+v", msg, one)
		}

		for _, tc := range []struct {
			q    string
			vars map[string]any
			want string
		}{
			{`query { customer(id: 95834049799701782) { id } }`, nil, "a string of 13"},
			{`query($id: FlakeID!) { customer(id: $id) { id } }`, map[string]any{"id": 123}, "a string of 13"},
			{`query($id: FlakeID!) { customer(id: $id) { id } }`, map[string]any{"id": "000000000000U"}, "invalid character"},
			{`query($id: FlakeID!) { customer(id: $id) { id } }`, map[string]any{"id": "123"}, "wrong length"},
			{create, map[string]any{"name": "C", "ref": "0000000000000"}, "zero ID names no customer"},
			{create, map[string]any{"name": "C", "ref": "00EZJCRCB4650"}, "no such customer"},
		} {
			if msg := query(t, srv.URL, tc.q, tc.vars, nil); !strings.Contains(msg, tc.want) {
				t.Errorf("%s %v: %q, want an error saying %q", tc.q, tc.vars, msg, tc.want)
			}
		}
	})
}
