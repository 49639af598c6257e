package migrations_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/ulidflake/ulidflake"
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

// The application's generators count from 2020-01-01, and so must the
// SQL functions: every instance passes the same WithEpoch.
func ExampleWithEpoch() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	epoch, err := ulidflake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	_, err = migrations.Migrate(context.Background(), db, migrations.WithEpoch(epoch))
	if errors.Is(err, migrations.ErrEpoch) {
		panic(err) // installed with another epoch: see ulid_flake_set_epoch
	}
	if err != nil {
		panic(err)
	}
	gen, err := ulidflake.NewGenerator(ulidflake.WithEpoch(epoch))
	if err != nil {
		panic(err)
	}
	_ = gen // IDs made here and by DEFAULT ulid_flake() read the same times
}

func ExampleWithDryRun() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server: the dry run reads the version table
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	_, _ = migrations.Migrate(context.Background(), db, migrations.WithDryRun(os.Stdout))
}

// A release is rolled back: revert the newest version this build knows,
// in the schema the application installed into.
func ExampleWithDirection() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	steps, err := migrations.Migrate(context.Background(), db,
		migrations.WithSchema("ids"), migrations.WithDirection(migrations.DirectionDown))
	if err != nil {
		panic(err)
	}
	for _, s := range steps {
		fmt.Println(s.Direction, s.Version, s.Name)
	}
}

func ExampleAll() {
	all, err := migrations.All()
	fmt.Println(len(all) == migrations.Latest(), all[0].Version, all[0].Name, err)
	// Output: true 1 ulid_flake <nil>
}

func ExampleFS() {
	// golang-migrate, with a version table of its own (docs/sql.md):
	//	src, err := iofs.New(migrations.FS(), ".")
	//	m, err := migrate.NewWithSourceInstance("iofs", src, url+"&x-migrations-table=ulid_flake_schema_migrations")
	names, _ := fs.Glob(migrations.FS(), "001_*")
	fmt.Println(names)
	// Output: [001_ulid_flake.down.sql 001_ulid_flake.up.sql]
}

func ExampleGooseFS() {
	// goose, with a version table of its own and a lock (docs/sql.md):
	//	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.GooseFS(),
	//		goose.WithTableName("ulid_flake_goose_db_version"), goose.WithSessionLocker(locker))
	names, _ := fs.Glob(migrations.GooseFS(), "*.sql")
	fmt.Println(names)
	// Output: [001_ulid_flake.sql 002_ulid_flake_id.sql 003_ulid_flake_fixes.sql 004_ulid_flake_safe.sql 005_ulid_flake_owner.sql]
}
