package migrations_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/ulidflake/ulidflake/migrations"
)

func ExampleMigrate() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	steps, err := migrations.Migrate(context.Background(), db)
	if err != nil {
		panic(err)
	}
	for _, s := range steps {
		fmt.Println("applied", s.Version, s.Name)
	}
}

func ExampleDryRun() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server: the dry run reads the version table
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	_, _ = migrations.Migrate(context.Background(), db, migrations.DryRun(os.Stdout))
}

func ExampleAll() {
	all, err := migrations.All()
	fmt.Println(len(all) == migrations.Latest(), all[0].Version, all[0].Name, err)
	// Output: true 1 ulid_flake <nil>
}

func ExampleFS() {
	// golang-migrate: src, err := iofs.New(migrations.FS(), ".")
	names, _ := fs.Glob(migrations.FS(), "001_*")
	fmt.Println(names)
	// Output: [001_ulid_flake.down.sql 001_ulid_flake.up.sql]
}

func ExampleGooseFS() {
	// goose: goose.SetBaseFS(migrations.GooseFS()); goose.Up(db, ".")
	names, _ := fs.Glob(migrations.GooseFS(), "*.sql")
	fmt.Println(names)
	// Output: [001_ulid_flake.sql 002_ulid_flake_id.sql 003_ulid_flake_fixes.sql]
}

func ExampleConvertSerial() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server with the table
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	ctx := context.Background()
	conv, err := migrations.ConvertSerial(ctx, db, "customers", "id")
	if err != nil {
		panic(err)
	}
	fmt.Print(conv.Up) // review it, then:
	if err := conv.Apply(ctx, db, true); err != nil {
		panic(err)
	}
}
