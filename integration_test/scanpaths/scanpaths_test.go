package scanpaths_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "github.com/lib/pq"
	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/gormplugin"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/pgxtype"
)

// A verdict is what a path made of an input: an ID's value as a decimal
// integer, NULL (not valid), or an error that errors.Is the sentinel.
type verdict struct {
	value string
	err   error
}

func (v verdict) String() string {
	if v.err != nil {
		return v.err.Error()
	}
	return v.value
}

const (
	maxID  = "9223372036854775807"
	goodID = "16873543940839584" // 00EZJCRCB4650
	null   = "NULL"
)

func is(err error) verdict     { return verdict{err: err} }
func val(s string) verdict     { return verdict{value: s} }
func same(s string) [5]verdict { return [5]verdict{val(s), val(s), val(s), val(s), val(s)} }

// input is a value in a column or an argument, with its verdict for each
// rule: read as an ID, as a NullID, as a TextID (whose column holds text),
// written as an ID (or NullID, TextID, Prefixed), written as a Bound.
type input struct {
	name string
	v    int64
	null bool
	text string // the TextID column's value
	want [5]verdict
}

const (
	readID = iota
	readNullID
	readTextID
	writeID
	writeBound
)

var inputs = []input{
	{"zero", 0, false, "0000000000000", [5]verdict{val("0"), val(null), val("0"), is(flake.ErrZeroID), val("0")}},
	{"negative", -5, false, flake.ID(-5).String(),
		[5]verdict{is(flake.ErrRange), is(flake.ErrRange), is(flake.ErrRange), is(flake.ErrRange), is(flake.ErrRange)}},
	{"null", 0, true, "", [5]verdict{is(flake.ErrNull), val(null), is(flake.ErrNull), val(null), val(null)}},
	{"max", int64(flake.Max), false, "7ZZZZZZZZZZZZ", same(maxID)},
	{"good", 16873543940839584, false, "00EZJCRCB4650", same(goodID)},
}

type cus struct{}

func (cus) Prefix() string { return "cus" }

// A kind is one Go type the rule applies to.
type kind struct {
	name        string
	text        bool // stored as text
	read, write int  // the verdicts that apply
	// scan returns a target to scan into and what it then holds; nil for
	// a type that is never scanned (Bound).
	scan func() (target any, got func() string)
	arg  func(in input) any // the argument for in
	// gormRead and gormWrite are the paths through GORM.
	gormRead  func(db *gorm.DB, in input) verdict
	gormWrite func(db *gorm.DB, table string, in input) error
}

func newKind[T any](name string, text bool, read, write int, got func(*T) string, arg func(in input) *T) kind {
	k := kind{name: name, text: text, read: read, write: write,
		arg: func(in input) any { return arg(in) },
		gormWrite: func(db *gorm.DB, table string, in input) error {
			return db.Table(table).Create(&gormOut[T]{Name: in.name, V: arg(in)}).Error
		},
	}
	if got != nil {
		k.scan = func() (any, func() string) {
			t := new(T)
			return t, func() string { return got(t) }
		}
		k.gormRead = func(db *gorm.DB, in input) verdict {
			var row gormIn[T]
			err := db.Table("inputs").Select(column(text)+" AS v").Where("name = ?", in.name).Take(&row).Error
			if err != nil {
				return is(err)
			}
			return val(got(&row.V))
		}
	}
	return k
}

func intOf(id flake.ID) string { return strconv.FormatInt(int64(id), 10) }

// ptr returns a pointer to the value of in, or nil for NULL.
func ptr[T any](of func(flake.ID) T) func(in input) *T {
	return func(in input) *T {
		if in.null {
			return nil
		}
		v := of(flake.ID(in.v))
		return &v
	}
}

var kinds = []kind{
	newKind("ID", false, readID, writeID, func(id *ulidflake.ID) string { return intOf(*id) },
		ptr(func(id flake.ID) ulidflake.ID { return id })),
	newKind("NullID", false, readNullID, writeID,
		func(n *ulidflake.NullID) string {
			if !n.Valid {
				return null
			}
			return intOf(n.ID)
		},
		func(in input) *ulidflake.NullID { return &ulidflake.NullID{ID: flake.ID(in.v), Valid: !in.null} }),
	newKind("TextID", true, readTextID, writeID, func(t *ulidflake.TextID) string { return intOf(t.ID) },
		ptr(func(id flake.ID) ulidflake.TextID { return ulidflake.TextID{ID: id} })),
	newKind("Prefixed", false, readID, writeID, func(p *ulidflake.Prefixed[cus]) string { return intOf(p.ID) },
		ptr(func(id flake.ID) ulidflake.Prefixed[cus] { return ulidflake.Prefixed[cus]{ID: id} })),
	newKind[ulidflake.Bound]("Bound", false, readID, writeBound, nil,
		ptr(func(id flake.ID) ulidflake.Bound { return ulidflake.Bound(id) })),
}

func column(text bool) string {
	if text {
		return "t"
	}
	return "v"
}

// gormIn is a row read through GORM; gormOut one written through GORM
// (V is a pointer so that it can be NULL).
type (
	gormIn[T any]  struct{ V T }
	gormOut[T any] struct {
		Name string `gorm:"primaryKey"`
		V    *T
	}
)

// A path reads an input's column into a kind's Go type, and writes a
// kind's value as an argument and reads back what the database got.
type path struct {
	name  string
	read  func(k kind, in input) verdict
	write func(k kind, in input) verdict
}

// queryRow is what database/sql and pgx have in common.
type queryRow func(ctx context.Context, query string, args ...any) interface{ Scan(...any) error }

func queryPath(name string, q queryRow) path {
	ctx := context.Background()
	return path{
		name: name,
		read: func(k kind, in input) verdict {
			target, got := k.scan()
			if err := q(ctx, `SELECT `+column(k.text)+` FROM inputs WHERE name = $1`, in.name).Scan(target); err != nil {
				return is(err)
			}
			return val(got())
		},
		write: func(k kind, in input) verdict {
			var out *string
			query := `SELECT ($1::bigint)::text`
			if k.text {
				query = `SELECT $1::text`
			}
			if err := q(ctx, query, k.arg(in)).Scan(&out); err != nil {
				return is(err)
			}
			return stored(k, out)
		},
	}
}

// stored renders what the database holds, out, as a verdict.
func stored(k kind, out *string) verdict {
	switch {
	case out == nil:
		return val(null)
	case k.text:
		id, err := flake.Parse(*out)
		if err != nil {
			return is(err)
		}
		return val(intOf(id))
	}
	return val(*out)
}

func gormPath(t *testing.T, db *pgtest.DB) path {
	gdb, err := gorm.Open(postgres.Open(db.URL), &gorm.Config{Logger: logger.Discard})
	require.NoError(t, err)
	require.NoError(t, gdb.Use(gormplugin.NewPlugin()))
	return path{
		name: "gorm",
		read: func(k kind, in input) verdict { return k.gormRead(gdb, in) },
		write: func(k kind, in input) verdict {
			table := strings.ToLower("gorm_" + k.name + "_" + in.name)
			typ := "bigint"
			if k.text {
				typ = "text"
			}
			if err := gdb.Exec(`CREATE TABLE ` + table + ` (name text PRIMARY KEY, v ` + typ + `)`).Error; err != nil {
				return is(err)
			}
			if err := k.gormWrite(gdb, table, in); err != nil {
				return is(err)
			}
			var out *string
			if err := gdb.Raw(`SELECT v::text FROM `+table+` WHERE name = ?`, in.name).Scan(&out).Error; err != nil {
				return is(err)
			}
			return stored(k, out)
		},
	}
}

func paths(t *testing.T, db *pgtest.DB) []path {
	var ps []path
	std := func(name string, sdb *sql.DB) {
		t.Cleanup(func() { sdb.Close() })
		ps = append(ps, queryPath(name, func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
			return sdb.QueryRowContext(ctx, q, args...)
		}))
	}
	cfg, err := pgx.ParseConfig(db.URL)
	require.NoError(t, err)
	std("database/sql/pgx", stdlib.OpenDB(*cfg))
	std("database/sql/pgx+pgxtype", stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(pgxtype.AfterConnect)))
	pq, err := sql.Open("postgres", db.URL)
	require.NoError(t, err)
	std("database/sql/lib-pq", pq)
	for _, register := range []bool{false, true} {
		for _, mode := range []pgx.QueryExecMode{
			pgx.QueryExecModeCacheStatement, // binary results
			pgx.QueryExecModeCacheDescribe,
			pgx.QueryExecModeDescribeExec,
			pgx.QueryExecModeExec, // text results
			pgx.QueryExecModeSimpleProtocol,
		} {
			p := itest.Pool(t, db, register, mode)
			ps = append(ps, queryPath(fmt.Sprintf("pgx/register=%v/%s", register, mode),
				func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
					return p.QueryRow(ctx, q, args...)
				}))
		}
	}
	return append(ps, gormPath(t, db))
}

// gormNull is what GORM reads NULL as into an ID, a TextID or a Prefixed:
// the zero ID, never ErrNull. GORM scans a column into a pointer to the
// field's type (**ID), so database/sql sets that pointer to nil for NULL
// without calling Scan, and GORM then sets the field's zero value.
var gormNull = val("0")

// TestEveryPathOneVerdict reads and writes every input through every path
// and kind, and asserts the input's verdict for that kind.
func TestEveryPathOneVerdict(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		_, err := db.Exec(context.Background(), `CREATE TABLE inputs (name text PRIMARY KEY, v bigint, t text)`)
		require.NoError(t, err)
		for _, in := range inputs {
			var v, text any = in.v, in.text
			if in.null {
				v, text = nil, nil
			}
			_, err := db.Exec(context.Background(), `INSERT INTO inputs VALUES ($1, $2, $3)`, in.name, v, text)
			require.NoError(t, err)
		}
		for _, p := range paths(t, db) {
			for _, k := range kinds {
				for _, in := range inputs {
					if k.scan != nil {
						want := in.want[k.read]
						if p.name == "gorm" && in.null && k.read != readNullID {
							want = gormNull
						}
						check(t, p.name+"/read "+k.name+"/"+in.name, p.read(k, in), want)
					}
					check(t, p.name+"/write "+k.name+"/"+in.name, p.write(k, in), in.want[k.write])
				}
			}
		}
	})
}

func check(t *testing.T, what string, got, want verdict) {
	t.Helper()
	ok := got.err == nil && want.err == nil && got.value == want.value
	if want.err != nil {
		ok = errors.Is(got.err, want.err)
	}
	if !ok {
		t.Errorf("%s: got %s, want %s", what, got, want)
	}
	if got.err != nil && strings.Count(got.err.Error(), "flake: ") > 1 {
		t.Errorf("%s: the error names flake more than once: %s", what, got)
	}
}
