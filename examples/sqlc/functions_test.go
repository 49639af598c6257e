package sqlcexample

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/lib/pq"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/sqlc/dbpgx"
	"github.com/ulidflake/ulidflake/examples/sqlc/dbstd"
	"github.com/ulidflake/ulidflake/examples/sqlc/idtype"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// declared lists the functions of migrations/declarations.sql as
// name/number-of-arguments, one entry per number its defaults allow.
func declared(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../migrations/declarations.sql")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`CREATE FUNCTION (\w+)\(([^)]*)\)`).FindAllStringSubmatch(string(b), -1) {
		n, opt := 0, 0
		for _, arg := range strings.Split(m[2], ",") {
			if strings.TrimSpace(arg) != "" {
				n++
			}
			if strings.Contains(arg, " DEFAULT ") {
				opt++
			}
		}
		for k := n - opt; k <= n; k++ {
			out = append(out, m[1]+"/"+string(rune('0'+k)))
		}
	}
	return out
}

// calls lists the calls of ulid_flake functions in SQL as
// name/number-of-arguments (arguments hold no parentheses but casts').
func calls(sql string) map[string]bool {
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(ulid_flake\w*)\(((?:[^()]|\([^()]*\))*)\)`).FindAllStringSubmatch(sql, -1) {
		n := 0
		if strings.TrimSpace(m[2]) != "" {
			n = strings.Count(m[2], ",") + 1
		}
		out[m[1]+"/"+string(rune('0'+n))] = true
	}
	return out
}

// TestQueriesCallEveryFunction: query.sql, which sqlc compiles against
// declarations.sql (CI regenerates the code and fails on a difference),
// calls every declared function in every form its defaults allow, so a
// function sqlc cannot see fails the generation.
func TestQueriesCallEveryFunction(t *testing.T) {
	q, err := os.ReadFile("query.sql")
	if err != nil {
		t.Fatal(err)
	}
	fns, got := declared(t), calls(string(q))
	if len(fns) < 13 {
		t.Fatalf("declarations.sql declares %v: the pattern no longer reads it", fns)
	}
	for _, f := range fns {
		if !got[f] {
			t.Errorf("query.sql does not call %s (name/arguments): add a query that does", f)
		}
	}
}

// TestFunctions runs the queries that call each function through the
// code sqlc generated, on pgx (every query exec mode) and on database/sql
// (lib/pq, pgx's stdlib), and checks each result against Go's.
func TestFunctions(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		withSchema(t, db)
		drivers(t, db, func(t *testing.T, pool *pgxpool.Pool) {
			testFunctions(t, pgxFunctions(dbpgx.New(pool)))
		}, func(t *testing.T, sdb *sql.DB) {
			testFunctions(t, stdFunctions(dbstd.New(sdb)))
		})
	})
}

// functions is what testFunctions calls, the same on both outputs.
type functions struct {
	newIDs    func(sid int32) (dbpgx.NewIDsRow, error)
	nodeID    func() (ulidflake.ID, error)
	create    func(name string) (dbpgx.Customer, error)
	createAt  func(at time.Time) (dbpgx.Customer, error)
	text      func(idtype.CustomerID) (text, prefixed string, at time.Time, err error)
	byText    func(string) (dbpgx.Customer, error)
	byPrefix  func(string) (dbpgx.Customer, error)
	generator func() (dbpgx.GeneratorsRow, error)
	block     func(n int32) ([]ulidflake.ID, error)
}

func pgxFunctions(q *dbpgx.Queries) functions {
	ctx := context.Background()
	return functions{
		newIDs: func(sid int32) (dbpgx.NewIDsRow, error) { return q.NewIDs(ctx, sid) },
		nodeID: func() (ulidflake.ID, error) { return q.NodeScalableID(ctx) },
		create: func(name string) (dbpgx.Customer, error) { return q.CreateCustomer(ctx, name) },
		createAt: func(at time.Time) (dbpgx.Customer, error) {
			return q.CreateCustomerAt(ctx, dbpgx.CreateCustomerAtParams{CreatedAt: pgtype.Timestamptz{Time: at, Valid: true}, Name: "backfilled"})
		},
		text: func(id idtype.CustomerID) (string, string, time.Time, error) {
			r, err := q.CustomerText(ctx, id)
			return r.Text, r.Prefixed, r.CreatedAt.Time, err
		},
		byText:    func(s string) (dbpgx.Customer, error) { return q.GetCustomerByText(ctx, s) },
		byPrefix:  func(s string) (dbpgx.Customer, error) { return q.GetCustomerByPrefixed(ctx, s) },
		generator: func() (dbpgx.GeneratorsRow, error) { return q.Generators(ctx) },
		block:     func(n int32) ([]ulidflake.ID, error) { return q.ReserveBlock(ctx, n) },
	}
}

func stdFunctions(q *dbstd.Queries) functions {
	ctx := context.Background()
	return functions{
		newIDs: func(sid int32) (dbpgx.NewIDsRow, error) {
			r, err := q.NewIDs(ctx, sid)
			return dbpgx.NewIDsRow(r), err
		},
		nodeID: func() (ulidflake.ID, error) { return q.NodeScalableID(ctx) },
		create: func(name string) (dbpgx.Customer, error) {
			c, err := q.CreateCustomer(ctx, name)
			return dbpgx.Customer(c), err
		},
		createAt: func(at time.Time) (dbpgx.Customer, error) {
			c, err := q.CreateCustomerAt(ctx, dbstd.CreateCustomerAtParams{CreatedAt: at, Name: "backfilled"})
			return dbpgx.Customer(c), err
		},
		text: func(id idtype.CustomerID) (string, string, time.Time, error) {
			r, err := q.CustomerText(ctx, id)
			return r.Text, r.Prefixed, r.CreatedAt, err
		},
		byText: func(s string) (dbpgx.Customer, error) {
			c, err := q.GetCustomerByText(ctx, s)
			return dbpgx.Customer(c), err
		},
		byPrefix: func(s string) (dbpgx.Customer, error) {
			c, err := q.GetCustomerByPrefixed(ctx, s)
			return dbpgx.Customer(c), err
		},
		generator: func() (dbpgx.GeneratorsRow, error) {
			r, err := q.Generators(ctx)
			return dbpgx.GeneratorsRow(r), err
		},
		block: func(n int32) ([]ulidflake.ID, error) { return q.ReserveBlock(ctx, n) },
	}
}

// testBlock: ReserveBlock returns n IDs of this moment, ascending (made
// by ulid_flake() on a node without a SID), and refuses n = 0 with 22023.
func testBlock(t *testing.T, block func(n int32) ([]ulidflake.ID, error)) {
	t.Helper()
	start := time.Now()
	ids, err := block(100)
	if err != nil || len(ids) != 100 {
		t.Fatalf("ReserveBlock(100) = %d IDs, %v; want 100", len(ids), err)
	}
	within(t, start, time.Now(), ids...)
	for i, id := range ids {
		if i > 0 && id <= ids[i-1] {
			t.Errorf("ReserveBlock(100)[%d] = %s after %s: want ascending", i, id, ids[max(i-1, 0)])
		}
	}
	if _, err := block(0); sqlState(err) != "22023" {
		t.Errorf("ReserveBlock(0): %v, want SQLSTATE 22023", err)
	}
}

// sqlState is the SQLSTATE of err, from pgx or lib/pq.
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	var pqErr *pq.Error
	switch {
	case errors.As(err, &pgErr):
		return pgErr.Code
	case errors.As(err, &pqErr):
		return string(pqErr.Code)
	}
	return ""
}

func testFunctions(t *testing.T, f functions) {
	start := time.Now()
	ids, err := f.newIDs(3)
	if err != nil {
		t.Fatal(err)
	}
	within(t, start, time.Now(), ids.ID, ids.ScalableWithSid)
	if ids.ScalableWithSid.Int64()&31 != 3 {
		t.Errorf("SID of %+v: want 3 (the call's)", ids)
	}
	if _, err := f.nodeID(); sqlState(err) != "23514" {
		t.Errorf("NodeScalableID on a node without a SID: %v, want SQLSTATE 23514", err)
	}
	if g, err := f.generator(); err != nil || g != (dbpgx.GeneratorsRow{EpochMs: flake.DefaultEpoch().UnixMilli(), Sid: -1}) {
		t.Errorf("Generators = %+v, %v; want the default epoch and no SID (-1)", g, err)
	}
	testBlock(t, f.block)

	c, err := f.create("ada")
	if err != nil {
		t.Fatal(err)
	}
	text, prefixed, at, err := f.text(c.ID)
	if err != nil || text != c.ID.ID.String() || prefixed != c.ID.String() || !at.Equal(flake.DefaultEpoch().Time(c.ID.ID)) {
		t.Errorf("CustomerText(%s) = %q, %q, %v, %v; want Go's text, prefixed text and time", c.ID, text, prefixed, at, err)
	}
	for name, get := range map[string]func() (dbpgx.Customer, error){
		"GetCustomerByText":     func() (dbpgx.Customer, error) { return f.byText(text) },
		"GetCustomerByPrefixed": func() (dbpgx.Customer, error) { return f.byPrefix(prefixed) },
	} {
		if got, err := get(); err != nil || got != c {
			t.Errorf("%s = %+v, %v; want %+v", name, got, err, c)
		}
	}
	then := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	old, err := f.createAt(then)
	if err != nil || !flake.DefaultEpoch().Time(old.ID.ID).Equal(then) {
		t.Errorf("CreateCustomerAt(%v) = %+v (time %v), %v", then, old, flake.DefaultEpoch().Time(old.ID.ID), err)
	}
}
