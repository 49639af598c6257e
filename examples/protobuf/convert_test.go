package protobufexample

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/protobuf/customerpb"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }

// Customers made by PostgreSQL (DEFAULT ulid_flake()) go to protobuf and
// back: the binary form round-trips, and protojson writes the IDs exactly
// as encoding/json writes the service's own type, and reads the REST JSON.
func TestProtobufMapping(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		_, err := db.Exec(ctx, `CREATE TABLE customers (id bigint PRIMARY KEY DEFAULT ulid_flake(), name text NOT NULL,
			referrer bigint REFERENCES customers)`)
		if err != nil {
			t.Fatal(err)
		}
		var ada, bob Customer
		if err := db.QueryRow(ctx, `INSERT INTO customers (name) VALUES ('Ada') RETURNING id, name`).Scan(&ada.ID, &ada.Name); err != nil {
			t.Fatal(err)
		}
		bob.Referrer = &ada.ID
		if err := db.QueryRow(ctx, `INSERT INTO customers (name, referrer) VALUES ('Bob', $1) RETURNING id, name`, ada.ID).Scan(&bob.ID, &bob.Name); err != nil {
			t.Fatal(err)
		}

		for _, c := range []Customer{ada, bob} {
			wire, err := proto.Marshal(ToProto(c))
			if err != nil {
				t.Fatal(err)
			}
			var m customerpb.Customer
			if err := proto.Unmarshal(wire, &m); err != nil {
				t.Fatal(err)
			}
			back, err := FromProto(&m)
			if err != nil || back.ID != c.ID || (c.Referrer != nil) != (back.Referrer != nil) || c.Referrer != nil && *back.Referrer != *c.Referrer {
				t.Fatalf("binary round trip: %+v, %v; want %+v", back, err, c)
			}

			pj, err := JSON.Marshal(ToProto(c))
			if err != nil {
				t.Fatal(err)
			}
			rest, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, pj, rest) {
				t.Fatalf("protojson %s, REST %s", pj, rest)
			}
			var fromREST customerpb.Customer
			if err := protojson.Unmarshal(rest, &fromREST); err != nil {
				t.Fatal(err)
			}
			if got, err := FromProto(&fromREST); err != nil || got.ID != c.ID {
				t.Fatalf("REST JSON into the message: %+v, %v", got, err)
			}
		}
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM customers WHERE id = $1 AND referrer = $2`, bob.ID, ada.ID).Scan(&n); err != nil || n != 1 {
			t.Fatalf("the IDs do not name the rows: %d, %v", n, err)
		}

		// The binary-only event: 8 bytes of ID; its protojson is a decimal
		// string, which the ID's JSON refuses and flake.ParseInt reads.
		e, err := proto.Marshal(CreatedEvent(bob.ID))
		if err != nil {
			t.Fatal(err)
		}
		var ev customerpb.CustomerCreated
		if err := proto.Unmarshal(e, &ev); err != nil {
			t.Fatal(err)
		}
		if id, err := CreatedID(&ev); err != nil || id != bob.ID {
			t.Fatalf("event: %v, %v", id, err)
		}
		pj, err := protojson.Marshal(&ev)
		if err != nil {
			t.Fatal(err)
		}
		var decoded struct{ Id string }
		if err := json.Unmarshal(pj, &decoded); err != nil {
			t.Fatal(err)
		}
		if id, err := flake.ParseInt(decoded.Id); err != nil || id != bob.ID {
			t.Fatalf("ParseInt(%q) = %v, %v", decoded.Id, id, err)
		}
		var strict struct{ Id ulidflake.ID }
		if err := json.Unmarshal(pj, &strict); !errors.Is(err, flake.ErrLength) {
			t.Fatalf("the ID's JSON took protojson's decimal string %s: %v", pj, err)
		}
	})
}

// Bad IDs in a message are refused, naming the field.
func TestProtobufBadIDs(t *testing.T) {
	for _, m := range []*customerpb.Customer{{Id: ""}, {Id: "123"}, {Id: "0000000000000"},
		{Id: "00EZJCRCB4650", ReferrerId: "00EZJCRCB465U"}, {Id: "00EZJCRCB4650", ReferrerId: "0000000000000"}} {
		if _, err := FromProto(m); err == nil {
			t.Errorf("%v: no error", m)
		}
	}
	if _, err := CreatedID(&customerpb.CustomerCreated{Id: 1 << 63}); !errors.Is(err, flake.ErrRange) {
		t.Errorf("2^63: %v", err)
	}
	if _, err := CreatedID(&customerpb.CustomerCreated{}); !errors.Is(err, errZero) {
		t.Errorf("0: %v", err)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("not JSON: %s, %s", a, b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
