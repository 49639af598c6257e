package migrate_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

func TestMigrateUpDownDryRun(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		latest := migrations.Latest()
		require.GreaterOrEqual(t, latest, 1)

		// The template is migrated: nothing to do.
		steps, err := migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		require.Empty(t, steps)

		// A dry run prints and runs nothing.
		var out bytes.Buffer
		steps, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(0), migrations.WithDryRun(&out))
		require.NoError(t, err)
		require.Len(t, steps, latest)
		require.Contains(t, out.String(), "DROP FUNCTION ulid_flake();")
		var n int
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM pg_proc WHERE proname = 'ulid_flake'`).Scan(&n))
		require.Equal(t, 1, n)

		// Down one step by default, then up again.
		steps, err = migrations.Migrate(ctx, sdb, migrations.WithDirection(migrations.DirectionDown))
		require.NoError(t, err)
		require.Equal(t, []migrations.Step{{Version: latest, Name: steps[0].Name, Direction: migrations.DirectionDown}}, steps)
		if latest == 1 {
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM pg_proc WHERE proname LIKE 'ulid_flake%'`).Scan(&n))
			require.Zero(t, n, "down removes every function")
		}
		steps, err = migrations.Migrate(ctx, sdb)
		require.NoError(t, err)
		require.Len(t, steps, 1)
		var id int64
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT ulid_flake()`).Scan(&id))
		require.Positive(t, id)

		// Into a schema of its own, next to the first install.
		_, err = sdb.ExecContext(ctx, `CREATE SCHEMA flakes`)
		require.NoError(t, err)
		steps, err = migrations.Migrate(ctx, sdb, migrations.WithSchema("flakes"))
		require.NoError(t, err)
		require.Len(t, steps, latest)
		// Schema-qualified calls work whatever the search_path.
		conn, err := sdb.Conn(ctx)
		require.NoError(t, err)
		_, err = conn.ExecContext(ctx, `SET search_path TO pg_catalog`)
		require.NoError(t, err)
		require.NoError(t, conn.QueryRowContext(ctx, `SELECT flakes.ulid_flake()`).Scan(&id))
		require.Positive(t, id)
		_, err = conn.ExecContext(ctx, `RESET search_path`)
		require.NoError(t, err)
		require.NoError(t, conn.Close())

		// A version the build does not know is refused before anything runs.
		_, err = sdb.ExecContext(ctx, `INSERT INTO public.ulid_flake_migrations (version, name) VALUES (99, 'future')`)
		require.NoError(t, err)
		_, err = migrations.Migrate(ctx, sdb)
		require.ErrorIs(t, err, migrations.ErrUnknownVersion)
		_, err = migrations.Migrate(ctx, sdb, migrations.WithTarget(latest+1))
		require.ErrorIs(t, err, migrations.ErrTarget)
	})
}

func TestMigrationFilesForOtherTools(t *testing.T) {
	// golang-migrate's layout: NNN_name.up.sql / .down.sql at the root.
	names, err := fs.Glob(migrations.FS(), "*.sql")
	require.NoError(t, err)
	require.Contains(t, names, "001_ulid_flake.up.sql")
	require.Contains(t, names, "001_ulid_flake.down.sql")
	// goose's layout: one file per version with Up and Down sections.
	b, err := fs.ReadFile(migrations.GooseFS(), "001_ulid_flake.sql")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "-- +goose Up\n"))
	require.Contains(t, string(b), "-- +goose Down\n")
}

func TestMigrationFilesRunAsPlainSQL(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		// What golang-migrate or psql does: run each file as it is.
		all, err := migrations.All()
		require.NoError(t, err)
		_, err = db.Exec(ctx, `CREATE SCHEMA plain; SET search_path TO plain`)
		require.NoError(t, err)
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, `SET search_path TO plain`)
		require.NoError(t, err)
		for _, m := range all {
			_, err = conn.Exec(ctx, m.Up)
			require.NoError(t, err, "version %d up", m.Version)
		}
		var id int64
		require.NoError(t, conn.QueryRow(ctx, `SELECT plain.ulid_flake()`).Scan(&id))
		require.Positive(t, id)
		for i := len(all) - 1; i >= 0; i-- {
			_, err = conn.Exec(ctx, all[i].Down)
			require.NoError(t, err, "version %d down", all[i].Version)
		}
	})
}

// TestSQLMatchesGo cross-checks the SQL functions against package flake.
func TestSQLMatchesGo(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		ids := itest.RandomIDs(10_000, 5)
		ints := make([]int64, len(ids))
		for i, id := range ids {
			ints[i] = id.Int64()
		}
		rows, err := db.Query(ctx, `SELECT x, ulid_flake_encode(x), ulid_flake_decode(lower(ulid_flake_encode(x)))
			FROM unnest($1::bigint[]) WITH ORDINALITY AS u(x, n) ORDER BY n`, ints)
		require.NoError(t, err)
		i := 0
		for rows.Next() {
			var x, decoded int64
			var text string
			require.NoError(t, rows.Scan(&x, &text, &decoded))
			require.Equal(t, ids[i].String(), text, "encode %d", x)
			require.Equal(t, x, decoded, "decode %s", text)
			i++
		}
		require.NoError(t, rows.Err())
		require.Equal(t, len(ids), i)

		// Every invalid class fails in both, with SQLSTATE 22P02 and the same reason.
		for _, tc := range []struct {
			in     string
			reason string
		}{
			{"", "wrong length"}, {"ABC", "wrong length"}, {"00000000000000", "wrong length"},
			{"000000000000ß", "wrong length"}, {"00000000000ß", "invalid character"},
			{"000000000000I", "invalid character"}, {"000000000000L", "invalid character"},
			{"000000000000O", "invalid character"}, {"000000000000u", "invalid character"},
			{"000000000000-", "invalid character"}, {" 000000000000", "invalid character"},
			{"8000000000000", "value above 7ZZZZZZZZZZZZ"}, {"ZZZZZZZZZZZZZ", "value above 7ZZZZZZZZZZZZ"},
		} {
			_, goErr := flake.Parse(tc.in)
			require.ErrorContains(t, goErr, tc.reason, "Go %q", tc.in)
			var v int64
			err := db.QueryRow(ctx, `SELECT ulid_flake_decode($1)`, tc.in).Scan(&v)
			var pgErr *pgconn.PgError
			require.ErrorAs(t, err, &pgErr, "SQL %q", tc.in)
			require.Equal(t, "22P02", pgErr.Code)
			require.Contains(t, pgErr.Message, tc.reason, "SQL %q", tc.in)
			require.Equal(t, strings.TrimPrefix(goErr.Error(), "flake: "), strings.TrimPrefix(pgErr.Message, "ulid_flake: "), "messages for %q", tc.in)
		}

		// Time and bounds agree.
		at := time.Date(2025, 7, 1, 12, 30, 45, 678_000_000, time.UTC)
		lo := flake.DefaultEpoch().MinID(at)
		hi := flake.DefaultEpoch().MaxID(at)
		var sqlLo, sqlHi int64
		var sqlTime time.Time
		require.NoError(t, db.QueryRow(ctx, `SELECT ulid_flake_min($1), ulid_flake_max($1), ulid_flake_time($2)`, at, int64(hi)).Scan(&sqlLo, &sqlHi, &sqlTime))
		require.Equal(t, int64(lo), sqlLo)
		require.Equal(t, int64(hi), sqlHi)
		require.True(t, sqlTime.Equal(at), "%s vs %s", sqlTime, at)

		// A custom epoch, set by ulid_flake_set_epoch, agrees with the Go epoch.
		epoch, _ := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, `SELECT ulid_flake_set_epoch($1::bigint, force => true)`, epoch.UnixMilli())
		require.NoError(t, err)
		var gen int64
		var before, after time.Time
		require.NoError(t, conn.QueryRow(ctx, `SELECT clock_timestamp(), ulid_flake(), clock_timestamp()`).Scan(&before, &gen, &after))
		// The ID's millisecond lies between the server's clock read just
		// before and just after it (an order, not a duration: a busy
		// machine cannot break it).
		idTime := epoch.Time(flake.ID(gen))
		require.False(t, idTime.Before(before.Truncate(time.Millisecond)), "%s before %s", idTime, before)
		require.False(t, idTime.After(after), "%s after %s", idTime, after)
		epLo := epoch.MinID(at)
		require.NoError(t, conn.QueryRow(ctx, `SELECT ulid_flake_min($1)`, at).Scan(&sqlLo))
		require.Equal(t, int64(epLo), sqlLo)
	})
}

func TestSQLGeneratedIDs(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, tc := range []struct {
			name, def string
			sid       int
		}{
			{"standalone", "ulid_flake()", -1},
			{"scalable", "ulid_flake_scalable()", 9},
		} {
			t.Run(tc.name, func(t *testing.T) {
				table := "gen_" + tc.name
				_, err := db.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY DEFAULT %s, worker int NOT NULL)`, table, tc.def))
				require.NoError(t, err)
				if tc.sid >= 0 {
					_, err = db.Exec(ctx, `SELECT ulid_flake_set_sid($1)`, tc.sid)
					require.NoError(t, err)
				}
				pool := itest.Pool(t, db, true, pgx.QueryExecModeCacheStatement)

				// 8 connections x 25k INSERT ... DEFAULT (a quick run 5k):
				// no collision, no error.
				const workers, batch = 8, 500
				each := pgtest.Scale(25_000, 5_000)
				start := time.Now()
				itest.RunWorkers(t, workers, func(w int) error {
					for done := 0; done < each; done += batch {
						b := &pgx.Batch{}
						for range batch {
							b.Queue(fmt.Sprintf(`INSERT INTO %s (worker) VALUES ($1)`, table), w)
						}
						if err := pool.SendBatch(ctx, b).Close(); err != nil {
							return err
						}
					}
					return nil
				})
				end := time.Now()
				var n, distinct int
				require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*), count(DISTINCT id) FROM %s`, table)).Scan(&n, &distinct))
				require.Equal(t, workers*each, n)
				require.Equal(t, n, distinct)

				// They parse in Go with the right time and layout.
				rows, err := pool.Query(ctx, fmt.Sprintf(`SELECT id FROM %s ORDER BY random() LIMIT 2000`, table))
				require.NoError(t, err)
				ids, err := pgx.CollectRows(rows, pgx.RowTo[ulidflake.ID])
				require.NoError(t, err)
				for _, id := range ids {
					back, err := ulidflake.Parse(id.String())
					require.NoError(t, err)
					require.Equal(t, id, back)
					require.False(t, ulidflake.DefaultEpoch().Time(id).Before(start.Add(-time.Second).Truncate(time.Millisecond)), "%s at %s", id, ulidflake.DefaultEpoch().Time(id))
					require.False(t, ulidflake.DefaultEpoch().Time(id).After(end.Add(time.Second)), "%s at %s", id, ulidflake.DefaultEpoch().Time(id))
					if tc.sid >= 0 {
						require.Equal(t, tc.sid, id.SID())
					}
				}
			})
		}
	})
}

func TestSQLGeneratorErrors(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		var v int64
		for q, want := range map[string]string{
			`SELECT ulid_flake_scalable()`:        "no SID: give ulid_flake_scalable(sid) or ulid_flake_set_sid(n)",
			`SELECT ulid_flake_set_sid(32)`:       "ulid_flake_set_sid: SID 32 is not in 0..31",
			`SELECT ulid_flake_set_sid(-1)`:       "ulid_flake_set_sid: SID -1 is not in 0..31",
			`SELECT ulid_flake_scalable(32)`:      "SID not in 0..31",
			`SELECT ulid_flake_encode(-1)`:        "is negative",
			`SELECT ulid_flake_min('1999-01-01')`: "time out of range",
			`SELECT ulid_flake_min('infinity')`:   "time out of range: infinity is not a finite time",
			`SELECT ulid_flake_max('-infinity')`:  "time out of range: -infinity is not a finite time",
			`SELECT ulid_flake_max('2400-01-01')`: "time out of range",
		} {
			err := db.QueryRow(ctx, q).Scan(&v)
			require.ErrorContains(t, err, want, q)
		}
		// Bad settings and epochs are named, with stable SQLSTATEs. The
		// epoch setting is read only by the install (version 5).
		for _, tc := range []struct{ set, query, want, code string }{
			{`SET ulid_flake.epoch_ms = 'soon'`, `SELECT ulid_flake_set_epoch(1234567890123456789)`, "is not between 0 and 244606207777792 Unix ms", "22023"},
			{`SET ulid_flake.epoch_ms = 'x'`, `SELECT ulid_flake_set_epoch(NULL)`, "the epoch is NULL", "22004"},
			// The SID setting is read only by the install (version 5).
			{`SET ulid_flake.sid = 'seven'`, `SELECT ulid_flake_scalable()`, "no SID: give ulid_flake_scalable(sid) or ulid_flake_set_sid(n)", "23514"},
			{`SET ulid_flake.sid = '7'`, `SELECT ulid_flake_scalable()`, "no SID: give ulid_flake_scalable(sid) or ulid_flake_set_sid(n)", "23514"},
		} {
			conn, err := db.Acquire(ctx)
			require.NoError(t, err)
			_, err = conn.Exec(ctx, tc.set)
			require.NoError(t, err)
			err = conn.QueryRow(ctx, tc.query).Scan(&v)
			if strings.HasPrefix(tc.set, `SET ulid_flake.epoch_ms`) {
				require.NoError(t, conn.QueryRow(ctx, `SELECT ulid_flake_min(now()) OPERATOR(pg_catalog.+) ulid_flake()`).Scan(new(int64)),
					"the setting is not read: %s", tc.set)
				err = conn.QueryRow(ctx, tc.query).Scan(new(any))
			}
			var pgErr *pgconn.PgError
			require.ErrorAs(t, err, &pgErr, "%s; %s", tc.set, tc.query)
			require.Contains(t, pgErr.Message+" "+pgErr.ConstraintName, tc.want, "%s; %s", tc.set, tc.query)
			require.Equal(t, tc.code, pgErr.Code, "%s; %s", tc.set, tc.query)
			conn.Conn().Close(ctx)
			conn.Release()
		}
		conn, err := db.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, `SELECT ulid_flake_set_epoch(4102444800000, force => true)`) // 2100: the clock is before it
		require.NoError(t, err)
		err = conn.QueryRow(ctx, `SELECT ulid_flake()`).Scan(&v)
		require.ErrorContains(t, err, "clock outside the epoch range")
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr)
		require.Equal(t, "23514", pgErr.Code)
		_, err = conn.Exec(ctx, `SELECT ulid_flake_set_epoch(1704067200000, force => true)`)
		require.NoError(t, err)
	})
}

func TestConvertSerial(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		_, err := sdb.ExecContext(ctx, `
			CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL);
			CREATE TABLE orders (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
				customer_id int NOT NULL REFERENCES customers (id), total int NOT NULL);
			CREATE TABLE notes (id bigserial PRIMARY KEY, customer_id int REFERENCES customers (id), body text);
			INSERT INTO customers (name) SELECT 'c' || g FROM generate_series(1, 100) g;
			INSERT INTO orders (customer_id, total) SELECT 1 + g % 100, g FROM generate_series(1, 300) g;
			INSERT INTO notes (customer_id, body) VALUES (1, 'old');
			CREATE ROLE app_`+db.Name+` LOGIN PASSWORD 'app';
			GRANT USAGE ON SCHEMA public TO app_`+db.Name+`;
			GRANT SELECT, INSERT ON customers, orders, notes TO app_`+db.Name+`;`)
		require.NoError(t, err)
		t.Cleanup(func() {
			_, _ = sdb.ExecContext(context.Background(), `DROP OWNED BY app_`+db.Name+`; DROP ROLE app_`+db.Name)
		})
		var before []int64
		rows, err := sdb.QueryContext(ctx, `SELECT id FROM customers ORDER BY id`)
		require.NoError(t, err)
		for rows.Next() {
			var id int64
			require.NoError(t, rows.Scan(&id))
			before = append(before, id)
		}
		require.NoError(t, rows.Err())

		conv, err := bigserial.ConvertSerial(ctx, sdb, "customers", "id", bigserial.WithLockTimeout(2*time.Second))
		require.NoError(t, err)
		require.Contains(t, conv.Up, "lock_timeout = '2000ms'")
		require.Contains(t, conv.Up, "ALTER TABLE \"public\".\"orders\" ALTER COLUMN \"customer_id\" TYPE bigint")
		require.Contains(t, conv.Up, "ALTER TABLE \"public\".\"notes\" ALTER COLUMN \"customer_id\" TYPE bigint")
		require.NoError(t, conv.Apply(ctx, sdb, migrations.DirectionUp))
		convOrders, err := bigserial.ConvertSerial(ctx, sdb, "orders", "id")
		require.NoError(t, err)
		require.Contains(t, convOrders.Up, "DROP IDENTITY")
		require.NoError(t, convOrders.Apply(ctx, sdb, migrations.DirectionUp))

		// Connections that prepared statements on the table before the
		// conversion must reconnect (the column type changed): a new pool.
		sdb = stdlib.OpenDB(*pgxConfig(t, db.URL))
		t.Cleanup(func() { sdb.Close() })

		// Old rows untouched; the columns widened; the old sequence gone.
		var after []int64
		rows, err = sdb.QueryContext(ctx, `SELECT id FROM customers ORDER BY id`)
		require.NoError(t, err)
		for rows.Next() {
			var id int64
			require.NoError(t, rows.Scan(&id))
			after = append(after, id)
		}
		require.Equal(t, before, after)
		for _, col := range [][2]string{{"customers", "id"}, {"orders", "customer_id"}, {"notes", "customer_id"}} {
			var typ string
			require.NoError(t, sdb.QueryRowContext(ctx, `SELECT data_type FROM information_schema.columns WHERE table_name = $1 AND column_name = $2`, col[0], col[1]).Scan(&typ))
			require.Equal(t, "bigint", typ, "%s.%s", col[0], col[1])
		}
		var seqs int
		require.NoError(t, sdb.QueryRowContext(ctx, `SELECT count(*) FROM pg_class WHERE relkind = 'S' AND relname IN ('customers_id_seq', 'orders_id_seq')`).Scan(&seqs))
		require.Zero(t, seqs)

		// A non-owner role inserts; new rows sort after the old ones; FKs hold.
		appURL := strings.Replace(db.URL, "postgres:postgres@", "app_"+db.Name+":app@", 1)
		app, err := pgx.Connect(ctx, appURL)
		require.NoError(t, err)
		defer app.Close(ctx)
		var newID, orderID int64
		require.NoError(t, app.QueryRow(ctx, `INSERT INTO customers (name) VALUES ('new') RETURNING id`).Scan(&newID))
		require.Greater(t, newID, before[len(before)-1])
		require.NoError(t, app.QueryRow(ctx, `INSERT INTO orders (customer_id, total) VALUES ($1, 1) RETURNING id`, newID).Scan(&orderID))
		require.True(t, ulidflake.DefaultEpoch().Time(ulidflake.ID(orderID)).After(time.Now().Add(-time.Minute)))
		var first int64
		require.NoError(t, app.QueryRow(ctx, `SELECT id FROM customers ORDER BY id DESC LIMIT 1`).Scan(&first))
		require.Equal(t, newID, first)
		_, err = app.Exec(ctx, `INSERT INTO orders (customer_id, total) VALUES (123456789, 1)`)
		require.ErrorContains(t, err, "foreign key")

		// Converting twice does nothing: the column is converted already.
		again, err := bigserial.ConvertSerial(ctx, sdb, "customers", "id")
		require.NoError(t, err)
		require.Empty(t, again.Up)
		require.ErrorIs(t, again.Apply(ctx, sdb, migrations.DirectionUp), bigserial.ErrConvert)

		// Down: a sequence again, from the old maximum plus one.
		require.NoError(t, conv.Apply(ctx, sdb, migrations.DirectionDown))
		var next int64
		require.NoError(t, sdb.QueryRowContext(ctx, `INSERT INTO customers (name) VALUES ('back') RETURNING id`).Scan(&next))
		require.Equal(t, before[len(before)-1]+1, next)
	})
}

func pgxConfig(t *testing.T, url string) *pgx.ConnConfig {
	cfg, err := pgx.ParseConfig(url)
	require.NoError(t, err)
	return cfg
}
