package bigserial_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

func ExampleConvertSerial() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server with the table
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	ctx := context.Background()
	conv, err := bigserial.ConvertSerial(ctx, db, "customers", "id")
	if err != nil {
		panic(err)
	}
	fmt.Print(conv.Up) // review it, then:
	if err := conv.Apply(ctx, db, migrations.DirectionUp); err != nil {
		panic(err)
	}
}

func ExampleConvertKeys() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server with the tables
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	ctx := context.Background()
	// customers and invoices (whose customer_id references customers) in
	// one transaction.
	conv, err := bigserial.ConvertKeys(ctx, db,
		[]bigserial.Key{{Table: "customers", Column: "id"}, {Table: "invoices", Column: "id"}},
		bigserial.WithLockTimeout(2*time.Second))
	if err != nil {
		panic(err)
	}
	fmt.Print(conv.Up) // review it, then:
	if err := conv.Apply(ctx, db, migrations.DirectionUp); err != nil {
		panic(err)
	}
}

func ExampleKeysIn() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server with the tables
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	ctx := context.Background()
	keys, skipped, err := bigserial.KeysIn(ctx, db, "billing") // every serial and identity key of the schema
	if err != nil {
		panic(err)
	}
	for _, s := range skipped { // migration history, left alone
		fmt.Printf("-- skipped %s: %s\n", s.Table, s.Why)
	}
	conv, err := bigserial.ConvertKeys(ctx, db, keys)
	if err != nil {
		panic(err)
	}
	fmt.Print(conv.Up)
}

func ExampleConversion_Files() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server with the tables
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	conv, err := bigserial.ConvertKeys(context.Background(), db, []bigserial.Key{{Table: "customers", Column: "id"}})
	if err != nil {
		panic(err)
	}
	// 000002_ulid_flake_keys.up.sql and .down.sql; "goose" gives one file.
	files, err := conv.Files("golang-migrate", "000002_ulid_flake_keys")
	if err != nil {
		panic(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join("db/migrations", name), []byte(text), 0o644); err != nil {
			panic(err)
		}
	}
}

func ExampleWithScalable() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server with the table, and the node's SID fixed (ulid_flake_set_sid)
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	conv, err := bigserial.ConvertSerial(context.Background(), db, "customers", "id", bigserial.WithScalable())
	if err != nil {
		panic(err)
	}
	fmt.Print(conv.Up)
}

func ExampleWithDependents() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server with the tables
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	// The view invoice_totals reads invoices.id, which the conversion widens
	// (ErrDependents without this option): drop it and create it again in
	// the conversion's transaction, in the files too.
	conv, err := bigserial.ConvertSerial(context.Background(), db, "invoices", "id",
		bigserial.WithDependents("DROP VIEW invoice_totals;",
			"CREATE VIEW invoice_totals AS SELECT id, customer_id, total FROM invoices;"))
	if err != nil {
		panic(err)
	}
	files, err := conv.Files("goose", "00002_ulid_flake_keys")
	if err != nil {
		panic(err)
	}
	fmt.Print(files["00002_ulid_flake_keys.sql"])
}

func ExampleConversion_EpochFiles() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server with the tables
	}
	db, _ := sql.Open("pgx", url)
	defer db.Close()
	conv, err := bigserial.ConvertKeys(context.Background(), db, []bigserial.Key{{Table: "customers", Column: "id"}})
	if err != nil {
		panic(err)
	}
	epoch, err := flake.NewEpoch(time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)) // before the oldest row
	if err != nil {
		panic(err)
	}
	// The epoch as version 2, the conversion as version 3.
	epochFiles, err := conv.EpochFiles("goose", "00002_ulid_flake_epoch", epoch)
	if err != nil {
		panic(err)
	}
	keyFiles, err := conv.Files("goose", "00003_ulid_flake_keys")
	if err != nil {
		panic(err)
	}
	for _, files := range []map[string]string{epochFiles, keyFiles} {
		for name, text := range files {
			if err := os.WriteFile(filepath.Join("db/migrations", name), []byte(text), 0o644); err != nil {
				panic(err)
			}
		}
	}
}
