package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/ulidflake/ulidflake/migrations"
)

// cmdMigrations prints the SQL of the migrations, for people who run them
// with another tool: "up" (default) or "down", every version in order; or,
// with "write", writes them as files for golang-migrate or goose.
func cmdMigrations(args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "write" {
		return cmdMigrationsWrite(args[1:], stdout)
	}
	fs := newFlagSet("migrations")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir := "up"
	if fs.NArg() > 0 {
		dir = fs.Arg(0)
	}
	if fs.NArg() > 1 || (dir != "up" && dir != "down") {
		return fmt.Errorf("%w: migrations takes up or down (or write -tool golang-migrate|goose -dir DIR)", errUsage)
	}
	all, err := migrations.All()
	if err != nil {
		return err
	}
	// Each version in a transaction of its own: the files pin search_path
	// with set_config(..., true), which lasts as long as the transaction,
	// so under psql's autocommit it would not outlast its own statement.
	if dir == "down" {
		for i := len(all) - 1; i >= 0; i-- {
			fmt.Fprintf(stdout, "-- version %d %s (down)\nBEGIN;\n%s\nCOMMIT;\n", all[i].Version, all[i].Name, all[i].Down)
		}
		return nil
	}
	for _, m := range all {
		fmt.Fprintf(stdout, "-- version %d %s (up)\nBEGIN;\n%s\nCOMMIT;\n", m.Version, m.Name, m.Up)
	}
	return nil
}

// cmdConvert prints, or with -apply runs, the SQL that moves a serial,
// bigserial or identity column to DEFAULT ulid_flake().
func cmdConvert(args []string, stdout io.Writer) error {
	fs := newFlagSet("convert")
	url := fs.String("database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	table := fs.String("table", "", "the table (schema-qualified if needed)")
	column := fs.String("column", "id", "the key column")
	apply := fs.Bool("apply", false, "run the conversion instead of printing it")
	down := fs.Bool("down", false, "print (or run) the way back to a sequence")
	lock := fs.Duration("lock-timeout", 5*time.Second, "how long to wait for locks")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *url == "" {
		*url = os.Getenv("DATABASE_URL")
	}
	if *url == "" || *table == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: convert needs -table and -database-url (or DATABASE_URL)", errUsage)
	}
	db, err := sql.Open("pgx", *url)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	conv, err := migrations.ConvertSerial(ctx, db, *table, *column, migrations.LockTimeout(*lock))
	if errors.Is(err, migrations.ErrNoFunctions) {
		return fmt.Errorf("%w; install them first, for example: ulidflake migrations up | psql \"$DATABASE_URL\" -v ON_ERROR_STOP=1", migrations.ErrNoFunctions)
	}
	if errors.Is(err, migrations.ErrDependents) && !*apply && !*down {
		// The SQL is printed all the same: it runs between the statements
		// that drop the dependent objects and create them again.
		_, _ = io.WriteString(stdout, conv.Up)
	}
	if err != nil {
		return err
	}
	dir := migrations.DirectionUp
	if *down {
		dir = migrations.DirectionDown
	}
	if !*apply {
		switch {
		case *down:
			_, err = io.WriteString(stdout, conv.Down)
		case conv.Up == "":
			_, err = fmt.Fprintf(stdout, "-- the column is converted already; -down prints the way back\n")
		default:
			_, err = io.WriteString(stdout, conv.Up)
		}
		return err
	}
	if err := conv.Apply(ctx, db, dir); err != nil {
		return err
	}
	if *down {
		fmt.Fprintf(stdout, "converted %q.%q back to a sequence\n", *table, *column)
	} else {
		fmt.Fprintf(stdout, "converted %q.%q\n", *table, *column)
	}
	return nil
}
