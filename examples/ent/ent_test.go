package entexample

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/examples/ent/ent"
	"github.com/ulidflake/ulidflake/examples/ent/ent/author"
	"github.com/ulidflake/ulidflake/examples/ent/ent/post"
	_ "github.com/ulidflake/ulidflake/examples/ent/ent/runtime" // registers the schema hooks (ulident.FillID)
	"github.com/ulidflake/ulidflake/internal/pgtest"
	"github.com/ulidflake/ulidflake/pgxtype"
)

func TestMain(m *testing.M) { pgtest.Main(m, pgtest.Migrated) }

// driver opens db through pgx's database/sql driver, with pgxtype's codec.
func driver(t *testing.T, db *pgtest.DB) *entsql.Driver {
	t.Helper()
	cfg, err := pgx.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	drv := entsql.OpenDB(dialect.Postgres, stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(pgxtype.AfterConnect)))
	t.Cleanup(func() { drv.Close() })
	return drv
}

func open(t *testing.T, db *pgtest.DB) *ent.Client {
	t.Helper()
	client := ent.NewClient(ent.Driver(driver(t, db)))
	if err := client.Schema.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	return client
}

func distinct(t *testing.T, ids []ulidflake.ID) {
	t.Helper()
	seen := map[ulidflake.ID]bool{}
	for _, id := range ids {
		if id.IsZero() || seen[id] {
			t.Fatalf("zero or duplicate ID %d in %v", id, ids)
		}
		seen[id] = true
	}
}

func TestEnt(t *testing.T) {
	pgtest.Run(t, func(t *testing.T, db *pgtest.DB) {
		ctx := context.Background()
		client := open(t, db)
		var def sql.NullString
		if err := db.QueryRow(ctx, `SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef a JOIN pg_attribute c ON (c.attrelid, c.attnum) = (a.adrelid, a.adnum) WHERE adrelid = 'authors'::regclass AND attname = 'id'`).Scan(&def); err != nil || def.String != "ulid_flake()" {
			t.Fatalf("authors.id default = %v, %v", def, err)
		}
		start := time.Now()

		// Create, single and bulk: Author IDs from DEFAULT ulid_flake().
		a1, err := client.Author.Create().SetName("db-made").Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		bulk, err := client.Author.CreateBulk(
			client.Author.Create().SetName("b1"),
			client.Author.Create().SetName("b2"),
		).Save(ctx)
		if err != nil {
			t.Fatalf("Author CreateBulk: %v", err)
		}
		goID, err := ulidflake.New()
		if err != nil {
			t.Fatal(err)
		}
		a2, err := client.Author.Create().SetID(goID).SetName("go-made").Save(ctx)
		if err != nil || a2.ID != goID {
			t.Fatalf("Create with a Go ID: %+v, %v", a2, err)
		}
		authorIDs := []ulidflake.ID{a1.ID, bulk[0].ID, bulk[1].ID, a2.ID}
		distinct(t, authorIDs)

		// Post IDs from the FillID hook, single and bulk; a nullable reference.
		p1, err := client.Post.Create().SetTitle("anonymous").Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		posts, err := client.Post.CreateBulk(
			client.Post.Create().SetTitle("p2").SetAuthorID(a1.ID),
			client.Post.Create().SetTitle("p3").SetAuthor(a2),
		).Save(ctx)
		if err != nil {
			t.Fatalf("Post CreateBulk: %v", err)
		}
		postIDs := []ulidflake.ID{p1.ID, posts[0].ID, posts[1].ID}
		distinct(t, append(slices.Clone(authorIDs), postIDs...))
		end := time.Now()
		for _, id := range append(slices.Clone(authorIDs), postIDs...) {
			if ulidflake.DefaultEpoch().Time(id).Before(start.Truncate(time.Millisecond).Add(-time.Millisecond)) || ulidflake.DefaultEpoch().Time(id).After(end.Add(time.Millisecond)) {
				t.Errorf("ID %s has time %v, outside [%v, %v]", id, ulidflake.DefaultEpoch().Time(id), start, end)
			}
		}

		// Read by ID and by a list of IDs.
		got, err := client.Author.Get(ctx, a1.ID)
		if err != nil || got.Name != "db-made" {
			t.Fatalf("Get: %+v, %v", got, err)
		}
		list, err := client.Author.Query().Where(author.IDIn(authorIDs...)).Order(ent.Asc(author.FieldID)).All(ctx)
		want := slices.Clone(authorIDs)
		slices.Sort(want)
		if err != nil || len(list) != len(want) {
			t.Fatalf("IDIn: %v, %v", list, err)
		}
		for i := range list {
			if list[i].ID != want[i] {
				t.Fatalf("IDIn [%d] = %d, want %d", i, list[i].ID, want[i])
			}
		}
		gp, err := client.Post.Get(ctx, p1.ID)
		if err != nil || gp.AuthorID != nil {
			t.Fatalf("anonymous post: %+v, %v", gp, err)
		}
		gp, err = client.Post.Query().Where(post.ID(posts[1].ID)).WithAuthor().Only(ctx)
		if err != nil || gp.AuthorID == nil || *gp.AuthorID != a2.ID || gp.Edges.Author == nil || gp.Edges.Author.ID != a2.ID {
			t.Fatalf("post with author: %+v, %v", gp, err)
		}
		anon, err := client.Post.Query().Where(post.AuthorIDIsNil()).IDs(ctx)
		if err != nil || len(anon) != 1 || anon[0] != p1.ID {
			t.Fatalf("posts without author: %v, %v", anon, err)
		}

		// A time range on the key: bounds from ulid_flake_min/max.
		var lo, hi ulidflake.ID
		if err := db.QueryRow(ctx, `SELECT ulid_flake_min($1), ulid_flake_max($2)`, start.Add(-time.Second), end.Add(time.Second)).Scan(&lo, &hi); err != nil {
			t.Fatal(err)
		}
		in, err := client.Post.Query().Where(post.IDGTE(lo), post.IDLTE(hi)).IDs(ctx)
		if err != nil || len(in) != 3 {
			t.Fatalf("time range: %v, %v", in, err)
		}

		// The zero ID is never written.
		if _, err := client.Post.Create().SetTitle("bad").SetAuthorID(0).Save(ctx); !errors.Is(err, ulidflake.ErrZeroID) {
			t.Fatalf("zero author ID: %v, want ErrZeroID", err)
		}
		if n, err := client.Post.Query().Count(ctx); err != nil || n != 3 {
			t.Fatalf("posts: %d, %v", n, err)
		}
	})
}
