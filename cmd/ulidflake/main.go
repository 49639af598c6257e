// Command ulidflake makes, inspects and bounds Ulid-Flake IDs.
//
// Usage:
//
//	ulidflake new [-n N] [-sid S] [-entropy E] [-epoch RFC3339] [-format text|int|hex|json]
//	ulidflake inspect [-epoch RFC3339] [ID ...]   (IDs from stdin when none are given)
//	ulidflake bounds [-epoch RFC3339] FROM [TO]
//	ulidflake migrations [up|down]                (prints the SQL of package migrations)
//	ulidflake migrations write -tool golang-migrate|goose -dir DIR
//	ulidflake convert -table T... [-tables-in SCHEMA] [-column id] [-database-url URL] [-apply] [-down] [-lock-timeout 5s]
//	ulidflake convert ... [-tool golang-migrate|goose -dir DIR] [-name N] [-version V]
//	ulidflake convert ... [-drop FILE] [-create FILE]
//	ulidflake convert ... [-scalable]
//	ulidflake nodes [-timeout 10s] URL...
//
// inspect accepts the 13-character Base32 form, a prefixed ID
// (cus_00EZJCRCB4650, whose prefix it prints) or the decimal integer; an
// input of 13 characters is read as Base32. It reads words of any length
// from stdin; a negative number is an input (refused), not a flag. bounds
// clamps times outside the format's range to its ends, and says so. -h
// after a command or subcommand prints its lines of usage, its
// subcommands among them, and its flags. Exit status: 0 on success, 2 on
// bad input or usage (unknown flags and arguments, out-of-range flags,
// bad IDs and times), 1 on any other failure (a stdin that cannot be
// read, a database that cannot be reached, databases whose IDs nodes
// finds could collide).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/migrations/bigserial"
)

const usage = `usage:
  ulidflake new [-n N] [-sid S] [-entropy E] [-epoch RFC3339] [-format text|int|hex|json]
  ulidflake inspect [-epoch RFC3339] [ID ...]    (reads IDs from stdin when none are given)
  ulidflake bounds [-epoch RFC3339] FROM [TO]    (times in RFC 3339; TO defaults to now)
  ulidflake migrations [up|down]                 (prints the SQL, for other tools: psql -v ON_ERROR_STOP=1)
  ulidflake migrations write -tool golang-migrate|goose -dir DIR
                                                 (the migration files, for those tools' command lines)
  ulidflake convert -table T... [-tables-in SCHEMA] [-column id] [-database-url URL] [-apply] [-down] [-lock-timeout 5s]
                                                 (serial/bigserial/identity keys to DEFAULT ulid_flake(), all in one
                                                 transaction; -table again for more)
  ulidflake convert ... [-tool golang-migrate|goose -dir DIR] [-name N] [-version V]
                                                 (writes both ways as migration files instead)
  ulidflake convert ... [-drop FILE] [-create FILE]
                                                 (SQL that drops the objects in the way and creates them
                                                 again, run in the conversion's transaction)
  ulidflake convert ... [-scalable]              (DEFAULT ulid_flake_scalable() instead: a node with a SID, in a
                                                 mesh)
  ulidflake nodes [-timeout 10s] URL...          (the SIDs, offsets and epochs of databases; refuses a set whose
                                                 IDs could collide once their rows meet)
`

// errUsage marks errors in how the command was called: exit status 2.
var errUsage = errors.New("usage")

// errHelpShown is returned by parseFlags after -h printed a command's
// flags: exit status 0.
var errHelpShown = errors.New("help shown")

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
	case "nodes":
		err = cmdNodes(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	if err == nil || errors.Is(err, errHelpShown) {
		return 0
	}
	fmt.Fprintf(stderr, "ulidflake: %s\n", userMessage(err))
	if errors.Is(err, errUsage) || isInputError(err) {
		if errors.Is(err, errUsage) {
			fmt.Fprint(stderr, usage)
		}
		return 2
	}
	return 1
}

// userMessage returns err's message for a CLI user: each line without the
// "usage: " of errUsage or the "flake: " of the library's errors.
func userMessage(err error) string {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		l = strings.TrimPrefix(l, errUsage.Error()+": ")
		lines[i] = strings.TrimPrefix(l, "flake: ")
	}
	return strings.Join(lines, "\nulidflake: ")
}

// isInputError reports whether err comes from bad input rather than a
// failure of the machine.
func isInputError(err error) bool {
	for _, e := range []error{flake.ErrLength, flake.ErrCharacter, flake.ErrRange,
		flake.ErrEpochRange, flake.ErrTimeRange, flake.ErrOption, bigserial.ErrConvert} {
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

// parseFlags parses args and wraps a flag error as a usage error, in words
// for a CLI user. On -h it prints the command's lines of usage (its
// subcommands among them) and its flags, each with its help, and returns
// errHelpShown.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(fs)
			return errHelpShown
		}
		return fmt.Errorf("%w: %s: %s", errUsage, fs.Name(), flagMessage(err))
	}
	return nil
}

// commandUsage returns the lines of usage that start with the command
// name ("migrations" gives those of "migrations" and of "migrations
// write"), each with the line of explanation under it, if any.
func commandUsage(name string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(usage, "\n") {
		if c, ok := strings.CutPrefix(l, "  ulidflake "); ok {
			in = c == name || strings.HasPrefix(c, name+" ")
		}
		if in && l != "" {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// printHelp prints to helpOut what -h shows of the command fs parses.
func printHelp(fs *flag.FlagSet) {
	fmt.Fprintf(helpOut, "usage of ulidflake %s:\n%s", fs.Name(), commandUsage(fs.Name()))
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		fmt.Fprintln(helpOut, "flags: none")
		return
	}
	fmt.Fprintln(helpOut, "flags:")
	fs.SetOutput(helpOut)
	fs.PrintDefaults()
}

// flagMessages rewrite the flag package's errors for a CLI user.
var flagMessages = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`^flag provided but not defined: (-.*)$`), "unknown flag $1"},
	{regexp.MustCompile(`^flag needs an argument: (-.*)$`), "$1 needs a value"},
	{regexp.MustCompile(`^invalid value (".*") for flag (-\S+): parse error$`), "$2: $1 is not a number"},
	{regexp.MustCompile(`^invalid value (".*") for flag (-\S+): value out of range$`), "$2: $1 is out of range"},
}

// flagMessage returns err's message in words for a CLI user.
func flagMessage(err error) string {
	msg := err.Error()
	for _, m := range flagMessages {
		if m.re.MatchString(msg) {
			return m.re.ReplaceAllString(msg, m.with)
		}
	}
	return msg
}

// inputsAfterNegative returns args with "--" before a negative number
// that the flag package would read as a flag (one among the leading
// flags), so that it is read as an input (then refused as negative), not
// as an unknown flag.
func inputsAfterNegative(fs *flag.FlagSet, args []string) []string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-" || !strings.HasPrefix(a, "-"):
			return args // flags end here
		case a[1] >= '0' && a[1] <= '9':
			return slices.Concat(args[:i:i], []string{"--"}, args[i:])
		case takesValue(fs, a):
			i++ // skip the flag's value
		}
	}
	return args
}

// takesValue reports whether arg is a flag of fs given without "=" that
// takes its value from the next argument.
func takesValue(fs *flag.FlagSet, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// epochFlag parses the -epoch value ("" is the default epoch).
func epochFlag(s string) (flake.Epoch, error) {
	if s == "" {
		return flake.DefaultEpoch(), nil
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
	sid := fs.Int("sid", 0, "scalable layout with this SID (0..31); stand-alone when not given")
	entropy := fs.Int("entropy", 1, "entropy size in bytes (1..3 stand-alone, 1..2 scalable)")
	epochStr := fs.String("epoch", "", "epoch in RFC 3339 (default 2024-01-01T00:00:00Z)")
	format := fs.String("format", "text", "output: text (the 13 characters), int, hex or json")
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
	if flagGiven(fs, "sid") {
		if *sid < 0 || *sid > flake.MaxSID {
			return fmt.Errorf("%w: -sid %d: a SID is 0..%d (leave -sid out for stand-alone IDs)", errUsage, *sid, flake.MaxSID)
		}
		opts = append(opts, flake.WithSID(*sid))
	}
	g, err := flake.NewGenerator(opts...)
	if err != nil {
		return err // flake.ErrOption: bad input
	}
	show, err := formatter(*format)
	if err != nil {
		return err
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

// formatter returns the function that prints an ID in the -format named.
func formatter(name string) (func(flake.ID) string, error) {
	switch name {
	case "text":
		return flake.ID.String, nil
	case "int":
		return func(id flake.ID) string { return fmt.Sprint(id.Int64()) }, nil
	case "hex":
		return hex, nil
	case "json":
		return func(id flake.ID) string { b, _ := id.MarshalJSON(); return string(b) }, nil
	}
	return nil, fmt.Errorf("%w: -format %q: want text, int, hex or json", errUsage, name)
}

// flagGiven reports whether the flag was given on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

func hex(id flake.ID) string { return fmt.Sprintf("%#x", id.Int64()) }

func cmdInspect(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := newFlagSet("inspect")
	epochStr := fs.String("epoch", "", "epoch in RFC 3339 (default 2024-01-01T00:00:00Z)")
	if err := parseFlags(fs, inputsAfterNegative(fs, args)); err != nil {
		return err
	}
	epoch, err := epochFlag(*epochStr)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	p := &inspector{w: w, epoch: epoch}
	if fs.NArg() > 0 {
		for _, in := range fs.Args() {
			p.inspect(in, len(in))
		}
		return p.bad
	}
	if err := readWords(stdin, p.inspect); err != nil {
		return errors.Join(p.bad, fmt.Errorf("reading stdin: %w", err))
	}
	if p.n == 0 && p.bad == nil {
		return fmt.Errorf("%w: inspect: no IDs given, as arguments or on stdin", errUsage)
	}
	return p.bad
}

// inspector prints what each input holds, and collects the errors of bad
// inputs.
type inspector struct {
	w     io.Writer
	epoch flake.Epoch
	n     int   // inputs seen
	bad   error // the errors of bad inputs
}

// inspect prints the fields of word, an input of size bytes (word is cut
// at maxWord when longer).
func (p *inspector) inspect(word string, size int) {
	p.n++
	if size > len(word) {
		p.bad = errors.Join(p.bad, fmt.Errorf("%w: %q... is %d bytes: an ID is 13 Base32 characters or a decimal integer",
			flake.ErrLength, word[:16], size))
		return
	}
	prefix, rest := splitPrefix(word)
	id, err := parseAny(rest)
	if err != nil {
		p.bad = errors.Join(p.bad, err)
		return
	}
	if p.n > 1 {
		fmt.Fprintln(p.w)
	}
	if prefix != "" {
		fmt.Fprintf(p.w, "prefix      %s\n", prefix)
	}
	fmt.Fprintf(p.w, "id          %s\n", id)
	fmt.Fprintf(p.w, "time        %s\n", p.epoch.Time(id).Format(flake.RFC3339Milli))
	fmt.Fprintf(p.w, "timestamp   %d ms since %s\n", id.Timestamp(), p.epoch)
	fmt.Fprintf(p.w, "stand-alone randomness=%d\n", id.Randomness())
	fmt.Fprintf(p.w, "scalable    randomness=%d sid=%d\n", id.ScalableRandomness(), id.SID())
	fmt.Fprintf(p.w, "int         %d\n", id.Int64())
	fmt.Fprintf(p.w, "hex         %s\n", hex(id))
	fmt.Fprintf(p.w, "binary      %#b\n", id.Int64())
}

// maxWord is the longest word readWords hands over whole: longer than any
// ID's form, so that a longer word is bad input.
const maxWord = 96

// readWords calls fn with each blank-separated word of r, and its length
// in bytes; a word longer than maxWord is cut there, whatever its length,
// so that input of any length is read in constant memory. It returns r's
// error, if any.
func readWords(r io.Reader, fn func(word string, size int)) error {
	br := bufio.NewReader(r)
	var word []byte
	size := 0
	for {
		c, err := br.ReadByte()
		if err != nil || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			if size > 0 {
				fn(string(word), size)
			}
			word, size = word[:0], 0
			if err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			continue
		}
		if size < maxWord {
			word = append(word, c)
		}
		size++
	}
}

// splitPrefix returns the prefix and the 13 characters of a prefixed ID
// (flake.Prefixed), cus_00EZJCRCB4650, by flake's rule for prefixes, or ""
// and s for anything else.
func splitPrefix(s string) (prefix, rest string) {
	if p, r, err := flake.SplitPrefixed(s); err == nil && len(r) == flake.TextLen {
		return p, r
	}
	return "", s
}

// parseAny reads the Base32 form (13 characters) or the decimal integer.
func parseAny(s string) (flake.ID, error) {
	if len(s) == flake.TextLen {
		return flake.Parse(s)
	}
	if len(s) > 0 && (s[0] >= '0' && s[0] <= '9' || s[0] == '-') {
		id, err := flake.ParseInt(s)
		if errors.Is(err, flake.ErrCharacter) && len(s) >= flake.TextLen-2 && len(s) <= flake.TextLen+2 {
			// Near 13 characters with letters: a Base32 ID of the wrong length.
			return 0, fmt.Errorf("%w: %q is %d characters: a Base32 ID has %d (or give the decimal integer)",
				flake.ErrLength, s, len(s), flake.TextLen)
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
	lo := epoch.MinID(from) // never fails: times outside the range clamp
	hi := epoch.MinID(to)
	fmt.Fprintf(stdout, "from  %s  id >= %s (%d)%s\n", from.UTC().Format(flake.RFC3339Milli), lo, lo.Int64(), clampNote(epoch, from))
	fmt.Fprintf(stdout, "to    %s  id <  %s (%d)%s\n", to.UTC().Format(flake.RFC3339Milli), hi, hi.Int64(), clampNote(epoch, to))
	fmt.Fprintf(stdout, "WHERE id >= %d AND id < %d\n", lo.Int64(), hi.Int64())
	return nil
}

// clampNote says when t is outside the times epoch's IDs hold, and so was
// clamped to the first or the last ID.
func clampNote(epoch flake.Epoch, t time.Time) string {
	if _, err := epoch.Timestamp(t); err == nil {
		return ""
	}
	if t.Before(epoch.Time(0)) {
		return fmt.Sprintf("  (before the epoch %s: clamped to the first ID)", epoch)
	}
	return fmt.Sprintf("  (past the last time an ID holds, %s: clamped to the last ID)", epoch.Time(flake.Max).Format(flake.RFC3339Milli))
}
