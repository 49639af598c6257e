package moves_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
)

// Rows each table holds before a move, and rows added after it.
const (
	sourceRows = 1000
	earlyRows  = 10   // right after the move, before Migrate runs
	newRows    = 2000 // after Migrate
)

// install is one way a database makes its IDs, with its tables.
type install struct {
	name   string
	ext    bool // needs CREATE EXTENSION ulid_flake_ext
	ddl    string
	tables []table // in the order rows are added and copied (references last)
	// check runs on the moved database after the new rows are in: what the
	// install promises beyond unique, ordered IDs.
	check func(t *testing.T, db *database)
}

// table is an application table: an id column made by a default, and made,
// which says whether a row was made before the move ('source') or after
// it ('copy').
type table struct {
	name string
	cols string // the columns a data copy writes (no generated column)
	fill string // adds $2 rows marked made = $1
}

var installs = []install{{
	name: "sql",
	ddl: `CREATE TABLE customers (id bigint PRIMARY KEY DEFAULT ulid_flake(), made text NOT NULL, name text NOT NULL);
		CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT ulid_flake(), made text NOT NULL,
			customer bigint NOT NULL REFERENCES customers (id), total int NOT NULL);
		CREATE INDEX orders_customer ON orders (customer);
		CREATE TABLE events (id bigint PRIMARY KEY DEFAULT ulid_flake_scalable(3), made text NOT NULL, payload jsonb)`,
	tables: []table{
		{"customers", "id, made, name", `INSERT INTO customers (made, name) SELECT $1, 'c' || i FROM generate_series(1, $2) AS i`},
		{"orders", "id, made, customer, total", `INSERT INTO orders (made, customer, total) SELECT $1, (SELECT min(id) FROM customers), i FROM generate_series(1, $2) AS i`},
		{"events", "id, made, payload", `INSERT INTO events (made, payload) SELECT $1, jsonb_build_object('i', i) FROM generate_series(1, $2) AS i`},
	},
	check: func(t *testing.T, db *database) {
		var foreign int
		require.NoError(t, db.pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE id & 31 <> 3`).Scan(&foreign))
		require.Zero(t, foreign, "events whose SID is not 3")
	},
}, {
	name: "ext",
	ext:  true,
	ddl: `CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT ulid_flake_next(nextval('ulid_flake_seq')), made text NOT NULL, total int NOT NULL);
		CREATE TABLE items (id bigint PRIMARY KEY DEFAULT ulid_flake(), made text NOT NULL, order_id bigint NOT NULL REFERENCES orders (id))`,
	tables: []table{
		{"orders", "id, made, total", `INSERT INTO orders (made, total) SELECT $1, i FROM generate_series(1, $2) AS i`},
		{"items", "id, made, order_id", `INSERT INTO items (made, order_id) SELECT $1, (SELECT min(id) FROM orders) FROM generate_series(1, $2)`},
	},
}, {
	name: "prefixed",
	ddl: `CREATE TABLE customers (id bigint PRIMARY KEY DEFAULT ulid_flake(), made text NOT NULL, name text NOT NULL,
			code text NOT NULL GENERATED ALWAYS AS (ulid_flake_encode(id, 'cus')) STORED UNIQUE);
		CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT ulid_flake(), made text NOT NULL, customer text NOT NULL REFERENCES customers (code));
		CREATE UNIQUE INDEX orders_code ON orders (ulid_flake_encode(id, 'ord'));
		CREATE VIEW customer_codes AS SELECT ulid_flake_encode(id, 'cus') AS code, name, made FROM customers`,
	tables: []table{
		{"customers", "id, made, name", `INSERT INTO customers (made, name) SELECT $1, 'c' || i FROM generate_series(1, $2) AS i`},
		{"orders", "id, made, customer", `INSERT INTO orders (made, customer) SELECT $1, (SELECT min(code) FROM customers) FROM generate_series(1, $2)`},
	},
	check: func(t *testing.T, db *database) {
		ctx := context.Background()
		var bad, view, rows int
		require.NoError(t, db.pool.QueryRow(ctx, `SELECT count(*) FROM customers
			WHERE code IS DISTINCT FROM ulid_flake_encode(id, 'cus') OR ulid_flake_decode(code, 'cus') IS DISTINCT FROM id`).Scan(&bad))
		require.Zero(t, bad, "customers whose code is not their id's")
		require.NoError(t, db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM customer_codes), (SELECT count(*) FROM customers)`).Scan(&view, &rows))
		require.Equal(t, rows, view, "the view's rows")
		// The expression index finds the newest order by its text form.
		var newest, found int64
		require.NoError(t, db.pool.QueryRow(ctx, `SELECT max(id) FROM orders`).Scan(&newest))
		require.NoError(t, db.pool.QueryRow(ctx, `SELECT id FROM orders WHERE ulid_flake_encode(id, 'ord') = ulid_flake_encode($1, 'ord')`, newest).Scan(&found))
		require.Equal(t, newest, found)
	},
}}

// database is a database on one of the servers.
type database struct {
	server *pgtest.Server
	name   string
	url    string
	user   string // "" for the superuser
	pass   string
	pool   *pgxpool.Pool
	sdb    *sql.DB
}

// connInfo is the libpq connection string that programs in the servers'
// containers use to reach the database.
func (d *database) connInfo(t *testing.T) string {
	t.Helper()
	ci, err := d.server.ConnInfo(context.Background(), d.name, d.user, d.pass)
	require.NoError(t, err)
	return ci
}

// freshDB creates an empty database (template0's clone) on s, owned by
// owner (the superuser when ""), and drops it when t ends. Its pool
// connects as the owner.
func freshDB(t *testing.T, s *pgtest.Server, owner, password string) *database {
	t.Helper()
	ctx := context.Background()
	name := pgtest.UniqueName() + "_moved"
	admin := pool(t, s.URL)
	stmt := `CREATE DATABASE ` + name + ` TEMPLATE template0`
	if owner != "" {
		stmt += ` OWNER ` + owner
	}
	_, err := admin.Exec(ctx, stmt)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := admin.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
		if err != nil {
			t.Errorf("dropping %s: %v", name, err)
		}
	})
	return open(t, s, name, owner, password)
}

func open(t *testing.T, s *pgtest.Server, name, user, password string) *database {
	t.Helper()
	u, err := url.Parse(s.URL)
	require.NoError(t, err)
	u.Path = "/" + name
	if user != "" {
		u.User = url.UserPassword(user, password)
	}
	p := pool(t, u.String())
	return &database{server: s, name: name, url: u.String(), user: user, pass: password, pool: p, sdb: stdDB(t, p)}
}

func pool(t *testing.T, u string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), u)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

func stdDB(t *testing.T, p *pgxpool.Pool) *sql.DB {
	sdb := stdlib.OpenDBFromPool(p)
	t.Cleanup(func() { sdb.Close() })
	return sdb
}

// role creates a login role that is not a superuser, dropped when t ends
// (after the databases it owns, which are dropped first when created later).
func role(t *testing.T, s *pgtest.Server) (name, password string) {
	t.Helper()
	name, password = pgtest.UniqueName()+"_mover", "mover"
	admin := pool(t, s.URL)
	_, err := admin.Exec(context.Background(), fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD '%s'`, name, password))
	require.NoError(t, err)
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), `DROP ROLE IF EXISTS `+name); err != nil {
			t.Errorf("dropping role %s: %v", name, err)
		}
	})
	return name, password
}

// epoch is the epoch of every install here, not the default (2024): a
// move that lost it would make IDs that sort before the old ones.
var epoch = func() flake.Epoch {
	e, err := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	return e
}()

// installedDB creates a fresh database with the install.
func installedDB(t *testing.T, s *pgtest.Server, in install) *database {
	t.Helper()
	db := freshDB(t, s, "", "")
	installIn(t, db, in)
	return db
}

// installIn installs in into the empty database db: the migrations, with
// epoch, the extension if in needs it, and the tables.
func installIn(t *testing.T, db *database, in install) {
	t.Helper()
	ctx := context.Background()
	_, err := migrations.Migrate(ctx, db.sdb, migrations.WithEpoch(epoch))
	require.NoError(t, err)
	if in.ext {
		_, err := db.pool.Exec(ctx, `CREATE EXTENSION ulid_flake_ext`)
		require.NoError(t, err)
	}
	_, err = db.pool.Exec(ctx, in.ddl)
	require.NoError(t, err)
}

// sourceDB creates the database to move: the install, with sourceRows
// rows in each table.
func sourceDB(t *testing.T, s *pgtest.Server, in install) *database {
	t.Helper()
	db := installedDB(t, s, in)
	fill(t, db, in, "source", sourceRows)
	return db
}

// fill adds n rows marked made to every table of the install.
func fill(t *testing.T, db *database, in install, made string, n int) {
	t.Helper()
	for _, tb := range in.tables {
		_, err := db.pool.Exec(context.Background(), tb.fill, made, n)
		require.NoError(t, err, "adding rows to %s", tb.name)
	}
}

// requireContainers skips t unless the servers run in containers of this
// test binary: the moves run pg_dump and friends in them.
func requireContainers(t *testing.T, servers []*pgtest.Server) {
	t.Helper()
	for _, s := range servers {
		if s.Image == "" {
			t.Skipf("the moves run pg_dump in the servers' containers; %s is set", pgtest.EnvURL)
		}
	}
}

func tableNames(in install) string {
	var names []string
	for _, tb := range in.tables {
		names = append(names, tb.name)
	}
	return strings.Join(names, ", ")
}
