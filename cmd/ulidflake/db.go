package main

import (
	"fmt"
	"io"

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
