// Command ulidflake makes, inspects and bounds Ulid-Flake IDs.
//
// Usage:
//
//	ulidflake new [-n N] [-sid S] [-entropy E] [-epoch RFC3339] [-format base32|int|hex|json]
//	ulidflake inspect [-epoch RFC3339] [ID ...]   (IDs from stdin when none are given)
//	ulidflake bounds [-epoch RFC3339] FROM [TO]
//	ulidflake migrations [up|down]                (prints the SQL of package migrations)
//	ulidflake convert -table T [-column id] [-database-url URL] [-apply] [-down]
//
// inspect accepts the 13-character Base32 form or the decimal integer; an
// input of 13 characters is read as Base32. Exit status: 0 on success, 2 on
// bad input or usage, 1 on any other failure.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/migrations"
)

const usage = `usage:
  ulidflake new [-n N] [-sid S] [-entropy E] [-epoch RFC3339] [-format base32|int|hex|json]
  ulidflake inspect [-epoch RFC3339] [ID ...]    (reads IDs from stdin when none are given)
  ulidflake bounds [-epoch RFC3339] FROM [TO]    (times in RFC 3339; TO defaults to now)
  ulidflake migrations [up|down]                 (prints the SQL, for golang-migrate, goose, psql...)
  ulidflake convert -table T [-column id] [-database-url URL] [-apply] [-down] [-lock-timeout 5s]
                                                 (serial/bigserial/identity to DEFAULT ulid_flake())
`

// errUsage marks errors in how the command was called: exit status 2.
var errUsage = errors.New("usage")

// helpShown is returned by parseFlags after -h printed a command's flags:
// exit status 0.
var helpShown = errors.New("help shown")

// helpOut is where -h prints a command's flags.
var helpOut io.Writer = os.Stdout

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "new":
		err = cmdNew(args[1:], stdout)
	case "inspect":
		err = cmdInspect(args[1:], stdin, stdout)
	case "bounds":
		err = cmdBounds(args[1:], stdout)
	case "migrations":
		err = cmdMigrations(args[1:], stdout)
	case "convert":
		err = cmdConvert(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	if err == nil || errors.Is(err, helpShown) {
		return 0
	}
	fmt.Fprintf(stderr, "ulidflake: %v\n", err)
	if errors.Is(err, errUsage) || isInputError(err) {
		if errors.Is(err, errUsage) {
			fmt.Fprint(stderr, usage)
		}
		return 2
	}
	return 1
}

// isInputError reports whether err comes from bad input rather than a
// failure of the machine.
func isInputError(err error) bool {
	for _, e := range []error{flake.ErrLength, flake.ErrCharacter, flake.ErrOverflow, flake.ErrIntRange,
		flake.ErrEpochRange, flake.ErrTimeRange, flake.ErrOption, migrations.ErrConvert} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by run
	return fs
}

// parseFlags parses args and wraps a flag error as a usage error.
// On -h it prints the command's flags, each with its help, and returns
// helpShown.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(helpOut, "usage of ulidflake %s:\n", fs.Name())
			fs.SetOutput(helpOut)
			fs.PrintDefaults()
			return helpShown
		}
		return fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
	}
	return nil
}

// epochFlag parses the -epoch value ("" is the default epoch).
func epochFlag(s string) (flake.Epoch, error) {
	if s == "" {
		return flake.DefaultEpoch, nil
	}
	t, err := parseTime(s)
	if err != nil {
		return flake.Epoch{}, err
	}
	return flake.NewEpoch(t)
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: time %q is not RFC 3339 (like 2025-06-01T12:00:00Z)", errUsage, s)
	}
	return t, nil
}

func cmdNew(args []string, stdout io.Writer) error {
	fs := newFlagSet("new")
	n := fs.Int("n", 1, "how many IDs")
	sid := fs.Int("sid", -1, "scalable layout with this SID (0..31); stand-alone when not set")
	entropy := fs.Int("entropy", 1, "entropy size in bytes (1..3 stand-alone, 1..2 scalable)")
	epochStr := fs.String("epoch", "", "epoch in RFC 3339 (default 2024-01-01T00:00:00Z)")
	format := fs.String("format", "base32", "output: base32, int, hex or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: new takes no arguments, got %q", errUsage, fs.Args())
	}
	if *n < 1 {
		return fmt.Errorf("%w: -n %d: want at least 1", errUsage, *n)
	}
	epoch, err := epochFlag(*epochStr)
	if err != nil {
		return err
	}
	opts := []flake.Option{flake.WithEpoch(epoch), flake.WithEntropy(*entropy)}
	if *sid != -1 {
		opts = append(opts, flake.WithSID(*sid))
	}
	g, err := flake.NewGenerator(opts...)
	if err != nil {
		return err
	}
	var show func(flake.ID) string
	switch *format {
	case "base32":
		show = flake.ID.String
	case "int":
		show = func(id flake.ID) string { return fmt.Sprint(id.Int64()) }
	case "hex":
		show = hex
	case "json":
		show = func(id flake.ID) string { b, _ := id.MarshalJSON(); return string(b) }
	default:
		return fmt.Errorf("%w: -format %q: want base32, int, hex or json", errUsage, *format)
	}
	w := bufio.NewWriter(stdout)
	for range *n {
		id, err := g.NewWait(context.Background())
		if err != nil {
			return err
		}
		fmt.Fprintln(w, show(id))
	}
	return w.Flush()
}

func hex(id flake.ID) string { return fmt.Sprintf("%#x", id.Int64()) }

func cmdInspect(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := newFlagSet("inspect")
	epochStr := fs.String("epoch", "", "epoch in RFC 3339 (default 2024-01-01T00:00:00Z)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	epoch, err := epochFlag(*epochStr)
	if err != nil {
		return err
	}
	inputs := fs.Args()
	if len(inputs) == 0 {
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			inputs = append(inputs, strings.Fields(sc.Text())...)
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
		if len(inputs) == 0 {
			return fmt.Errorf("%w: inspect: no IDs given, as arguments or on stdin", errUsage)
		}
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	var bad error
	for i, in := range inputs {
		id, err := parseAny(in)
		if err != nil {
			bad = errors.Join(bad, err)
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "id          %s\n", id)
		fmt.Fprintf(w, "time        %s\n", epoch.Time(id).Format(flake.RFC3339Milli))
		fmt.Fprintf(w, "timestamp   %d ms since %s\n", id.Timestamp(), epoch)
		fmt.Fprintf(w, "stand-alone randomness=%d\n", id.Randomness())
		fmt.Fprintf(w, "scalable    randomness=%d sid=%d\n", id.ScalableRandomness(), id.SID())
		fmt.Fprintf(w, "int         %d\n", id.Int64())
		fmt.Fprintf(w, "hex         %s\n", hex(id))
		fmt.Fprintf(w, "binary      %#b\n", id.Int64())
	}
	return bad
}

// parseAny reads the Base32 form (13 characters) or the decimal integer.
func parseAny(s string) (flake.ID, error) {
	if len(s) == flake.EncodedLen {
		return flake.Parse(s)
	}
	if len(s) > 0 && (s[0] >= '0' && s[0] <= '9' || s[0] == '-') {
		id, err := flake.ParseInt(s)
		if errors.Is(err, flake.ErrCharacter) && len(s) >= flake.EncodedLen-2 && len(s) <= flake.EncodedLen+2 {
			// Near 13 characters with letters: a Base32 ID of the wrong length.
			return 0, fmt.Errorf("%w: %q is %d characters: a Base32 ID has %d (or give the decimal integer)",
				flake.ErrLength, s, len(s), flake.EncodedLen)
		}
		return id, err
	}
	return flake.Parse(s) // reports the wrong length
}

func cmdBounds(args []string, stdout io.Writer) error {
	fs := newFlagSet("bounds")
	epochStr := fs.String("epoch", "", "epoch in RFC 3339 (default 2024-01-01T00:00:00Z)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return fmt.Errorf("%w: bounds takes FROM and an optional TO", errUsage)
	}
	epoch, err := epochFlag(*epochStr)
	if err != nil {
		return err
	}
	from, err := parseTime(fs.Arg(0))
	if err != nil {
		return err
	}
	to := time.Now()
	if fs.NArg() == 2 {
		if to, err = parseTime(fs.Arg(1)); err != nil {
			return err
		}
	}
	if !to.After(from) {
		return fmt.Errorf("%w: TO %s is not after FROM %s", errUsage, to.Format(flake.RFC3339Milli), from.Format(flake.RFC3339Milli))
	}
	lo, err := epoch.MinID(from)
	if err != nil {
		return err
	}
	hi, err := epoch.MinID(to)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "from  %s  id >= %s (%d)\n", from.UTC().Format(flake.RFC3339Milli), lo, lo.Int64())
	fmt.Fprintf(stdout, "to    %s  id <  %s (%d)\n", to.UTC().Format(flake.RFC3339Milli), hi, hi.Int64())
	fmt.Fprintf(stdout, "WHERE id >= %d AND id < %d\n", lo.Int64(), hi.Int64())
	return nil
}
