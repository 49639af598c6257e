package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ulidflake/ulidflake/migrations"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

// convertFlags are the flags of convert.
type convertFlags struct {
	url, tablesIn, column, tool, dir, name, version string
	drop, create                                    string // files of SQL, for bigserial.WithDependents
	tables                                          listFlag
	apply, down, scalable                           bool
	lock                                            time.Duration
}

// listFlag is a flag that may be given more than once.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// parseConvert reads convert's command line.
func parseConvert(args []string) (convertFlags, error) {
	var f convertFlags
	fs := newFlagSet("convert")
	fs.StringVar(&f.url, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	fs.Var(&f.tables, "table", "a table (schema-qualified if needed); give -table again for more, all in one transaction")
	fs.StringVar(&f.tablesIn, "tables-in", "", "every table of this schema (its exact name) with a serial, identity or converted key")
	fs.StringVar(&f.column, "column", "id", "the key column of each -table")
	fs.BoolVar(&f.apply, "apply", false, "run the conversion instead of printing it")
	fs.BoolVar(&f.down, "down", false, "print (or run) the way back to sequences")
	fs.DurationVar(&f.lock, "lock-timeout", bigserial.DefaultLockTimeout, "how long to wait for locks")
	fs.StringVar(&f.tool, "tool", "", "write migration files for golang-migrate or goose (with -dir) instead of printing")
	fs.StringVar(&f.dir, "dir", "", "the directory of the application's migrations, for -tool")
	fs.StringVar(&f.name, "name", "ulid_flake_keys", "the name of the migration files, for -tool")
	fs.StringVar(&f.version, "version", "", "the version of the migration files, for -tool, padded as the tool numbers them (default: the next after the highest in -dir)")
	fs.StringVar(&f.drop, "drop", "", "a file of SQL that drops the objects in the way, run in the conversion's transaction before it")
	fs.StringVar(&f.create, "create", "", "a file of SQL that creates them again, run in the conversion's transaction after it")
	fs.BoolVar(&f.scalable, "scalable", false, "make the keys' default the install's ulid_flake_scalable(), not ulid_flake(): on a node with a SID, in a mesh")
	if err := parseFlags(fs, args); err != nil {
		return f, err
	}
	if f.url == "" {
		f.url = os.Getenv("DATABASE_URL")
	}
	if f.url == "" || (len(f.tables) == 0 && f.tablesIn == "") || fs.NArg() > 0 {
		return f, fmt.Errorf("%w: convert needs -table (or -tables-in) and -database-url (or DATABASE_URL)", errUsage)
	}
	if (f.tool == "") != (f.dir == "") || (f.tool != "" && (f.apply || f.down)) {
		return f, fmt.Errorf("%w: convert -tool and -dir go together, without -apply or -down (the files hold both sides)", errUsage)
	}
	if f.version != "" {
		if !digits.MatchString(f.version) {
			return f, fmt.Errorf("%w: convert -version %q: want a number, like 2", errUsage, f.version)
		}
		f.version = padVersion(f.version, f.tool)
	}
	return f, nil
}

// cmdConvert prints, runs (-apply) or writes as migration files (-tool)
// the SQL that moves serial, bigserial or identity columns to DEFAULT
// ulid_flake(), and back.
func cmdConvert(args []string, stdout io.Writer) error {
	f, err := parseConvert(args)
	if err != nil {
		return err
	}
	db, err := sql.Open("pgx", f.url)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	conv, skipped, err := convertKeys(ctx, db, f)
	header := skippedHeader(skipped, "-- ")
	_, _ = io.WriteString(convertStderr, skippedHeader(skipped, "ulidflake: convert: "))
	if errors.Is(err, migrations.ErrNotInstalled) {
		return fmt.Errorf("%w: %w; install them first, for example: ulidflake migrations up | psql \"$DATABASE_URL\" -v ON_ERROR_STOP=1",
			bigserial.ErrConvert, migrations.ErrNotInstalled)
	}
	if errors.Is(err, bigserial.ErrDependents) && !f.apply && !f.down && f.tool == "" {
		// The SQL is printed all the same: it runs between the statements
		// that drop the dependent objects and create them again.
		_, _ = io.WriteString(stdout, header+conv.Up)
	}
	if err != nil {
		return err
	}
	switch {
	case f.tool != "":
		return writeConversion(conv, header, f, stdout)
	case f.apply:
		return applyConversion(ctx, db, conv, f.down, stdout)
	case f.down:
		_, err = io.WriteString(stdout, header+conv.Down)
	case conv.Up == "":
		_, err = fmt.Fprintf(stdout, "%s-- the columns are converted already; -down prints the way back\n", header)
	default:
		_, err = io.WriteString(stdout, header+conv.Up)
	}
	return err
}

// convertStderr receives the notes on the tables -tables-in skipped.
var convertStderr io.Writer = os.Stderr

// convertKeys reads the keys that -table and -tables-in name, and the tables
// -tables-in skipped as migration history.
func convertKeys(ctx context.Context, db *sql.DB, f convertFlags) (bigserial.Conversion, []bigserial.Skipped, error) {
	var keys []bigserial.Key
	for _, t := range f.tables {
		keys = append(keys, bigserial.Key{Table: t, Column: f.column})
	}
	var skipped []bigserial.Skipped
	if f.tablesIn != "" {
		more, s, err := bigserial.KeysIn(ctx, db, f.tablesIn)
		if err != nil {
			return bigserial.Conversion{}, s, err
		}
		keys, skipped = append(keys, more...), s
	}
	opts := []bigserial.Option{bigserial.WithLockTimeout(f.lock)}
	if f.scalable {
		opts = append(opts, bigserial.WithScalable())
	}
	if f.drop != "" || f.create != "" {
		drop, err := readSQL(f.drop)
		if err != nil {
			return bigserial.Conversion{}, skipped, err
		}
		create, err := readSQL(f.create)
		if err != nil {
			return bigserial.Conversion{}, skipped, err
		}
		opts = append(opts, bigserial.WithDependents(drop, create))
	}
	conv, err := bigserial.ConvertKeys(ctx, db, keys, opts...)
	return conv, skipped, err
}

// readSQL reads a file of -drop or -create; no file is no SQL.
func readSQL(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errUsage, err)
	}
	return string(b), nil
}

// commentSafe keeps a name on its comment line, and out of goose's
// annotations (a line with "--" and "+goose").
var commentSafe = strings.NewReplacer("\r", `\r`, "\n", `\n`, "+goose", "(+)goose")

// skippedHeader writes the skipped tables one a line, after prefix.
func skippedHeader(skipped []bigserial.Skipped, prefix string) string {
	var b strings.Builder
	for _, s := range skipped {
		fmt.Fprintf(&b, "%sskipped %s: %s, left alone\n", prefix, commentSafe.Replace(s.Table), s.Why)
	}
	return b.String()
}

// applyConversion runs one side and says what it did.
func applyConversion(ctx context.Context, db *sql.DB, conv bigserial.Conversion, down bool, stdout io.Writer) error {
	dir, done := migrations.DirectionUp, "converted"
	if down {
		dir, done = migrations.DirectionDown, "converted back to sequences"
	}
	if err := conv.Apply(ctx, db, dir); err != nil {
		return err
	}
	for _, k := range conv.Keys {
		fmt.Fprintf(stdout, "%s %s.%q\n", done, k.Table, k.Column)
	}
	return nil
}

// writeConversion writes the migration files into f.dir, each beginning
// with header, refusing to overwrite any file.
func writeConversion(conv bigserial.Conversion, header string, f convertFlags, stdout io.Writer) error {
	version := f.version
	if version == "" {
		next, err := nextVersion(f.dir, f.tool)
		if err != nil {
			return err
		}
		version = next
	}
	files, err := conv.Files(f.tool, version+"_"+f.name)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
		if _, err := os.Stat(filepath.Join(f.dir, n)); err == nil {
			return fmt.Errorf("%w: %s exists already: give another -version or -name", errUsage, filepath.Join(f.dir, n))
		}
	}
	sort.Strings(names)
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return err
	}
	for _, n := range names {
		path := filepath.Join(f.dir, n)
		if err := os.WriteFile(path, []byte(header+files[n]), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
	}
	return nil
}

// versioned matches a migration file's leading version.
var versioned = regexp.MustCompile(`^([0-9]+)_.*\.sql$`)

// digits matches a -version.
var digits = regexp.MustCompile(`^[0-9]+$`)

// toolWidth is the number of digits each tool's own command gives a
// version: goose create -s ("%05v"), migrate create -seq (-digits 6).
func toolWidth(tool string) int {
	if tool == "goose" {
		return 5
	}
	return 6
}

// padVersion pads a -version with zeros to tool's width, as the tool's own
// command numbers its files: 2 is 00002 for goose, 000002 for golang-migrate.
func padVersion(v, tool string) string {
	if len(v) >= toolWidth(tool) {
		return v
	}
	return strings.Repeat("0", toolWidth(tool)-len(v)) + v
}

// nextVersion returns the version after the highest of the migration
// files in dir, with as many digits; in an empty or missing directory,
// 1 as each tool's own command numbers it (000001 for golang-migrate,
// 00001 for goose).
func nextVersion(dir, tool string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	width, high := toolWidth(tool), uint64(0)
	for _, e := range entries {
		m := versioned.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		v, err := strconv.ParseUint(m[1], 10, 64)
		if err != nil {
			return "", fmt.Errorf("%w: %s: version out of range: give -version", errUsage, e.Name())
		}
		if v >= high {
			high, width = v, len(m[1])
		}
	}
	return fmt.Sprintf("%0*d", width, high+1), nil
}

var _ flag.Value = (*listFlag)(nil)
