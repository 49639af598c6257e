package convert_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

// dependentKinds are the objects PostgreSQL cannot carry across ALTER
// COLUMN TYPE, each written on the column %[2]s of the table %[1]s, with
// how ConvertSerial names it (%[3]s is the schema).
var dependentKinds = []struct{ kind, create, named string }{
	{"view", `CREATE VIEW %[3]s.v AS SELECT %[2]s FROM %[1]s`, "view %[3]s.v"},
	{"materialized view", `CREATE MATERIALIZED VIEW %[3]s.mv AS SELECT %[2]s FROM %[1]s`, "materialized view %[3]s.mv"},
	{"rule", `CREATE RULE ru AS ON UPDATE TO %[1]s WHERE new.%[2]s > 0 DO ALSO SELECT 1`, "rule ru on table %[1]s"},
	{"policy", `CREATE POLICY po ON %[1]s USING (%[2]s > 0)`, "policy po on table %[1]s"},
	{"trigger", `CREATE FUNCTION %[3]s.f() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN new; END';
		CREATE TRIGGER tg BEFORE UPDATE OF %[2]s ON %[1]s FOR EACH ROW EXECUTE FUNCTION %[3]s.f()`, "trigger tg on table %[1]s"},
	{"generated column", `ALTER TABLE %[1]s ADD g bigint GENERATED ALWAYS AS (%[2]s * 2) STORED`, "column g of table %[1]s"},
	{"function body", `CREATE FUNCTION %[3]s.sf() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT max(%[2]s) FROM %[1]s; END`, "function %[3]s.sf()"},
}

// Each kind of dependent object, on the key and on a foreign-key column
// that references it: when the column must be widened (serial, int4),
// ConvertSerial refuses up front with ErrDependents naming the object, and
// changes nothing; with a bigint key and bigint references nothing is
// widened, and the conversion runs with the object in place. Index
// expressions and partial indexes are rebuilt by PostgreSQL: no refusal.
func TestConvertDependents(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		for i, d := range dependentKinds {
			for _, on := range []string{"key", "reference"} {
				for _, keyType := range []string{"serial", "bigserial"} {
					label := fmt.Sprintf("%s on the %s, %s key", d.kind, on, keyType)
					s := fmt.Sprintf("dep%d_%s_%s", i, on, keyType)
					refType := map[string]string{"serial": "int", "bigserial": "bigint"}[keyType]
					_, err := sdb.Exec(fmt.Sprintf(`CREATE SCHEMA %[1]s; CREATE TABLE %[1]s.k (id %[2]s PRIMARY KEY);
						CREATE TABLE %[1]s.r (kid %[3]s REFERENCES %[1]s.k); INSERT INTO %[1]s.k DEFAULT VALUES`, s, keyType, refType))
					require.NoError(t, err)
					table, col := s+".k", "id"
					if on == "reference" {
						table, col = s+".r", "kid"
					}
					_, err = sdb.Exec(fmt.Sprintf(d.create, table, col, s))
					require.NoError(t, err, label)

					conv, err := bigserial.ConvertSerial(ctx, sdb, s+".k", "id")
					if keyType == "bigserial" {
						require.NoError(t, err, label)
						require.NoError(t, conv.Apply(ctx, sdb, migrations.DirectionUp), label)
						require.Contains(t, columnDefault(t, sdb, s+".k", "id"), "ulid_flake()", label)
						continue
					}
					require.ErrorIs(t, err, bigserial.ErrDependents, label)
					require.ErrorIs(t, err, bigserial.ErrConvert, label)
					require.ErrorContains(t, err, fmt.Sprintf(d.named, table, col, s), label)
					require.ErrorContains(t, err, "drop them", label)
					require.NotEmpty(t, conv.Up, label)
					require.ErrorIs(t, conv.Apply(ctx, sdb, migrations.DirectionUp), bigserial.ErrDependents, label)
					require.Contains(t, columnDefault(t, sdb, s+".k", "id"), "nextval(", "%s: the table changed", label)
				}
			}
		}
	})
}

// The way the refusal tells: the printed SQL, run between the statement
// that drops the view and the one that creates it again, in one
// transaction, converts the table with the view kept. A sequence another
// object uses is named too (the conversion drops it), even for a bigint
// key; index expressions and partial indexes need nothing; every
// dependent is named at once, with its column.
func TestConvertDependentsWayThrough(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		t.Parallel()
		ctx := context.Background()
		sdb := itest.StdDB(t, db)
		_, err := sdb.Exec(`CREATE TABLE k (id serial PRIMARY KEY, v int);
			CREATE INDEX k_expr ON k ((id + 1)) WHERE id > 0;
			CREATE TABLE r (kid int REFERENCES k);
			CREATE VIEW public.v AS SELECT id, v FROM public.k;
			CREATE VIEW public.vr AS SELECT kid FROM public.r;
			INSERT INTO k (v) VALUES (1), (2)`)
		require.NoError(t, err)
		conv, err := bigserial.ConvertSerial(ctx, sdb, "k", "id")
		require.ErrorIs(t, err, bigserial.ErrDependents)
		require.ErrorContains(t, err, `view public.v (on "public"."k"."id", which must become bigint)`)
		require.ErrorContains(t, err, `view public.vr (on "public"."r"."kid", which must become bigint)`)
		require.Len(t, conv.Dependents, 2)
		require.NotContains(t, err.Error(), "k_expr")

		body := strings.TrimSuffix(strings.Replace(conv.Up, "BEGIN;\n", "", 1), "COMMIT;\n")
		_, err = sdb.Exec("BEGIN; DROP VIEW public.v; DROP VIEW public.vr;\n" + body +
			"CREATE VIEW public.v AS SELECT id, v FROM public.k; CREATE VIEW public.vr AS SELECT kid FROM public.r; COMMIT;")
		require.NoError(t, err, body)
		var n int
		require.NoError(t, sdb.QueryRow(`SELECT count(*) FROM v WHERE id < 10`).Scan(&n))
		require.Equal(t, 2, n)
		require.Contains(t, columnDefault(t, sdb, "k", "id"), "ulid_flake()")
		var indexed bool
		require.NoError(t, sdb.QueryRow(`SELECT pg_get_indexdef('k_expr'::regclass) LIKE '%WHERE (id > 0)%'`).Scan(&indexed))
		require.True(t, indexed)

		// A bigserial's sequence used by a view: the conversion drops it.
		_, err = sdb.Exec(`CREATE TABLE b (id bigserial PRIMARY KEY); CREATE VIEW public.peek AS SELECT nextval('b_id_seq')`)
		require.NoError(t, err)
		_, err = bigserial.ConvertSerial(ctx, sdb, "b", "id")
		require.ErrorIs(t, err, bigserial.ErrDependents)
		require.ErrorContains(t, err, `view public.peek (uses the sequence "public"."b_id_seq")`)
	})
}
