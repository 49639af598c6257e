package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

func runCLI(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestNew(t *testing.T) {
	before := time.Now().Add(-time.Millisecond)
	code, out, errOut := runCLI("", "new", "-n", "500")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Fields(out)
	if len(lines) != 500 {
		t.Fatalf("%d lines", len(lines))
	}
	var prev flake.ID
	for _, l := range lines {
		id, err := flake.Parse(l)
		if err != nil || id <= prev {
			t.Fatalf("line %q: %v (previous %s)", l, err, prev)
		}
		if at := flake.DefaultEpoch().Time(id); at.Before(before.Truncate(time.Millisecond)) || at.After(time.Now()) {
			t.Fatalf("ID %s carries %s", id, at)
		}
		prev = id
	}
}

func TestNewFormats(t *testing.T) {
	for format, check := range map[string]func(string) (flake.ID, error){
		"text": flake.Parse,
		"int":  flake.ParseInt,
		"json": func(s string) (id flake.ID, err error) {
			err = json.Unmarshal([]byte(s), &id)
			if !strings.HasPrefix(s, `"`) {
				t.Errorf("json output %s is not a string", s)
			}
			return id, err
		},
		"hex": func(s string) (flake.ID, error) {
			var v int64
			_, err := fmt.Sscanf(s, "0x%x", &v)
			return flake.ID(v), err
		},
	} {
		code, out, errOut := runCLI("", "new", "-n", "3", "-sid", "9", "-entropy", "2", "-format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		for _, l := range strings.Fields(out) {
			id, err := check(l)
			if err != nil || id.SID() != 9 || id == 0 {
				t.Errorf("%s: %q -> %s (SID %d), %v", format, l, id, id.SID(), err)
			}
		}
	}
}

func TestNewEpoch(t *testing.T) {
	code, out, _ := runCLI("", "new", "-epoch", "2020-01-01T00:00:00Z", "-format", "int")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	id, _ := flake.ParseInt(strings.TrimSpace(out))
	epoch, _ := flake.NewEpoch(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	if d := time.Since(epoch.Time(id)); d < 0 || d > time.Minute {
		t.Fatalf("ID under the 2020 epoch carries %s", epoch.Time(id))
	}
}

func TestInspect(t *testing.T) {
	want := []string{
		"id          00EZJCRCB4650",
		"time        2024-07-05T05:57:45.483Z",
		"timestamp   16091865483 ms since 2024-01-01T00:00:00.000Z",
		"stand-alone randomness=137376",
		"scalable    randomness=4293 sid=0",
		"int         16873543940839584",
		"hex         0x3bf26618b218a0",
		"binary      0b111011111100100110011000011000101100100001100010100000",
	}
	for _, tc := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"inspect", "00EZJCRCB4650"}},
		{"", []string{"inspect", "00ezjcrcb4650"}},
		{"", []string{"inspect", "16873543940839584"}},
		{"00EZJCRCB4650\n", []string{"inspect"}},
	} {
		code, out, errOut := runCLI(tc.stdin, tc.args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
		if got := strings.Split(strings.TrimSpace(out), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%v:\n%s", tc.args, out)
		}
	}
	// A prefixed ID (flake.Prefixed): its prefix, then the same lines.
	code, out, errOut := runCLI("", "inspect", "cus_00ezjcrcb4650")
	if code != 0 || errOut != "" || strings.TrimSpace(out) != "prefix      cus\n"+strings.Join(want, "\n") {
		t.Fatalf("prefixed: exit %d, stderr %q:\n%s", code, errOut, out)
	}
	for _, bad := range []string{"Cus_00EZJCRCB4650", "cus__00EZJCRCB4650", "_00EZJCRCB4650", "cus_00EZJCRCB465"} {
		if code, _, _ := runCLI("", "inspect", bad); code != 2 {
			t.Errorf("inspect %s: exit %d, want 2", bad, code)
		}
	}
	// Several IDs from stdin, blank-separated blocks.
	code, out, _ = runCLI("00EZJCRCB4650 7ZZZZZZZZZZZZ\n0000000000001\n", "inspect")
	if code != 0 || strings.Count(out, "id          ") != 3 || !strings.Contains(out, "time        2302-09-27T15:10:22.207Z") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestBadInputExitsTwo(t *testing.T) {
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string // on stderr
	}{
		{"", []string{"inspect", "00EZJCRCB465U"}, `"00EZJCRCB465U" has "U" at byte 12`},
		{"", []string{"inspect", "8000000000000"}, `value above 7ZZZZZZZZZZZZ: "8000000000000"`},
		{"", []string{"inspect", "--", "-5"}, `"-5" is negative`},
		{"", []string{"inspect", "ABC"}, `"ABC" is 3 bytes, want 13`},
		{"", []string{"inspect", "00EZJCRCB465"}, `wrong length: "00EZJCRCB465" is 12 characters: a Base32 ID has 13`},
		{"", []string{"inspect", "00EZJCRCB46500"}, `wrong length: "00EZJCRCB46500" is 14 characters`},
		{"", []string{"inspect", "00EZJCRCB4650", "nope"}, `"nope"`},
		{"bad-input\n", []string{"inspect"}, `"bad-input"`},
		{"", []string{"inspect"}, "no IDs given"},
		{"", []string{"new", "-sid", "32"}, "-sid 32: a SID is 0..31"},
		{"", []string{"new", "-entropy", "4"}, "WithEntropy(4): want 1..3"},
		{"", []string{"new", "-format", "xml"}, `-format "xml"`},
		{"", []string{"new", "-format", "base32"}, `-format "base32": want text, int, hex or json`}, // 0.1.0's name, no alias
		{"", []string{"new", "-n", "0"}, "-n 0"},
		{"", []string{"new", "-bogus"}, "new: unknown flag -bogus"},
		{"", []string{"new", "-sid", "-1"}, "-sid -1: a SID is 0..31 (leave -sid out for stand-alone IDs)"},
		{"", []string{"new", "-sid", "-7"}, "-sid -7: a SID is 0..31"},
		{"", []string{"new", "-n", "99999999999999999999"}, `-n: "99999999999999999999" is out of range`},
		{"", []string{"new", "-n", "ten"}, `-n: "ten" is not a number`},
		{"", []string{"inspect", "-1"}, `"-1" is negative`},
		{"", []string{"inspect", "00EZJCRCB4650", "-1"}, `"-1" is negative`},
		{"", []string{"inspect", "-epoch", "2020-01-01T00:00:00Z", "-1", "00EZJCRCB4650"}, `"-1" is negative`},
		{"", []string{"inspect", "-x"}, "inspect: unknown flag -x"},
		{"", []string{"bounds", "-epoch"}, "bounds: -epoch needs a value"},
		{"", []string{"bounds", "2025-01-01T00:00:00Z", "2025-01-02T00:00:00Z", "extra"}, "bounds takes FROM and an optional TO"},
		{"", []string{"new", "-epoch", "1960-01-01T00:00:00Z"}, "epoch out of range"},
		{"", []string{"bounds", "yesterday"}, `time "yesterday" is not RFC 3339`},
		{"", []string{"bounds", "2025-01-02T00:00:00Z", "2025-01-01T00:00:00Z"}, "is not after FROM"},
		{"", []string{"bounds"}, "bounds takes FROM"},
		{"", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"", nil, "usage:"},
	} {
		code, out, errOut := runCLI(tc.stdin, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "usage: ") || strings.Contains(errOut, " flake: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
		if tc.args != nil && tc.args[0] == "inspect" && len(tc.args) == 3 && tc.args[1] != "--" && !strings.Contains(out, "00EZJCRCB4650") {
			t.Errorf("%v: the good ID was not printed: %q", tc.args, out)
		}
	}
}

func TestBounds(t *testing.T) {
	code, out, errOut := runCLI("", "bounds", "2025-06-01T00:00:00Z", "2025-06-02T00:00:00Z")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "from  2025-06-01T00:00:00.000Z  id >= 019K7FK000000 (46838631628800000)\n" +
		"to    2025-06-02T00:00:00.000Z  id <  019NSWA000000 (46929228595200000)\n" +
		"WHERE id >= 46838631628800000 AND id < 46929228595200000\n"
	if out != want {
		t.Fatalf("got\n%s", out)
	}
	if code, out, _ := runCLI("", "bounds", "2025-06-01T00:00:00Z"); code != 0 || !strings.Contains(out, "WHERE id >= 46838631628800000 AND id < ") {
		t.Fatalf("bounds with TO = now: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI("", "help"); code != 0 || !strings.Contains(out, "usage:") {
		t.Fatalf("help: exit %d", code)
	}
}

func TestMigrationsSQL(t *testing.T) {
	code, out, _ := runCLI("", "migrations")
	if code != 0 || !strings.Contains(out, "CREATE SEQUENCE ulid_flake_seq") || !strings.Contains(out, "-- version 1 ulid_flake (up)") {
		t.Fatalf("exit %d:\n%.300s", code, out)
	}
	code, out, _ = runCLI("", "migrations", "down")
	if code != 0 || !strings.Contains(out, "DROP FUNCTION ulid_flake();") {
		t.Fatalf("exit %d:\n%.300s", code, out)
	}
	if code, _, errOut := runCLI("", "migrations", "sideways"); code != 2 || !strings.Contains(errOut, "up or down") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCLI("", "convert", "-database-url", "postgres://x@127.0.0.1:1/x"); code != 2 || !strings.Contains(errOut, "-table") {
		t.Fatalf("convert without -table: exit %d: %s", code, errOut)
	}
}

// -h of every command and subcommand exits 0 and prints its lines of
// usage (a command's subcommands among them) and its flags with their
// help, without showing the value of DATABASE_URL. The flags that a
// command's line of usage names are exactly those it defines, so that the
// usage cannot drift from the code.
func TestCommandHelp(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u:secret@localhost/db")
	for _, tc := range []struct {
		cmd   string
		lines []string // lines of usage -h must show
	}{
		{"new", []string{"ulidflake new [-n N]"}},
		{"inspect", []string{"ulidflake inspect [-epoch RFC3339] [ID ...]"}},
		{"bounds", []string{"ulidflake bounds [-epoch RFC3339] FROM [TO]"}},
		{"migrations", []string{"ulidflake migrations [up|down]", "ulidflake migrations write -tool"}},
		{"migrations write", []string{"ulidflake migrations write -tool golang-migrate|goose -dir DIR"}},
		{"convert", []string{"ulidflake convert -table T"}},
	} {
		var out bytes.Buffer
		helpOut = &out
		code := run(append(strings.Fields(tc.cmd), "-h"), strings.NewReader(""), &out, &out)
		helpOut = os.Stdout
		help := out.String()
		if code != 0 || !strings.HasPrefix(help, "usage of ulidflake "+tc.cmd+":\n") || strings.Contains(help, "secret") {
			t.Errorf("%s -h: exit %d:\n%s", tc.cmd, code, help)
			continue
		}
		for _, l := range tc.lines {
			if !strings.Contains(help, "\n  "+l) {
				t.Errorf("%s -h does not show %q:\n%s", tc.cmd, l, help)
			}
		}
		named, defined := usageFlags(tc.cmd), helpFlags(help)
		if !slices.Equal(named, defined) {
			t.Errorf("%s: the usage names the flags %q, the command defines %q", tc.cmd, named, defined)
		}
	}
}

// The package doc's usage lines are the usage's, which -h prints, so
// that go doc shows no other flags than the command has.
func TestDocUsageMatches(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	line := func(prefix string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^` + prefix + `(ulidflake \S.*?)(?:  +\(.*)?$`)
	}
	want := map[string]bool{}
	for _, l := range line("  ").FindAllStringSubmatch(usage, -1) {
		want[l[1]] = true
	}
	lines := line("//\t").FindAllStringSubmatch(string(src), -1)
	if len(lines) < 6 || len(lines) != len(want) {
		t.Fatalf("the package doc has %d lines of usage, the usage %d", len(lines), len(want))
	}
	for _, l := range lines {
		if !want[l[1]] {
			t.Errorf("the package doc's %q is not a line of the usage:\n%s", l[1], usage)
		}
	}
}

// usageFlags returns the flags named by the line of usage of cmd itself
// (not of its subcommands), sorted.
func usageFlags(cmd string) []string {
	var out []string
	for _, l := range strings.Split(usage, "\n") {
		rest, ok := strings.CutPrefix(l, "  ulidflake "+cmd+" ")
		if !ok || cmd == "migrations" && strings.HasPrefix(rest, "write") {
			continue
		}
		rest, _, _ = strings.Cut(rest, "(") // the explanation
		for _, m := range regexp.MustCompile(`(?:^|[ \[])(-[a-z][a-z-]*)`).FindAllStringSubmatch(rest, -1) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out
}

// helpFlags returns the flags that -h lists, sorted.
func helpFlags(help string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^  (-[a-z][a-z-]*)`).FindAllStringSubmatch(help, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

// Input of any length on stdin: a word over 64 KiB is bad input (exit 2,
// the good IDs around it printed), a line over 64 KiB of good IDs is fine;
// a failing stdin is a failure of the machine (exit 1).
func TestInspectLongStdin(t *testing.T) {
	long := strings.Repeat("7", 70<<10)
	code, out, errOut := runCLI("00EZJCRCB4650 "+long+" 0000000000001\n", "inspect")
	if code != 2 || strings.Count(out, "id          ") != 2 || !strings.Contains(errOut, "71680 bytes") || len(errOut) > 500 {
		t.Fatalf("exit %d, %d IDs printed, stderr %.300q", code, strings.Count(out, "id          "), errOut)
	}
	line := strings.Repeat("00EZJCRCB4650 ", 6000) // 84,000 bytes, no newline at the end
	code, out, errOut = runCLI(line, "inspect")
	if code != 0 || strings.Count(out, "id          00EZJCRCB4650") != 6000 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = run2([]string{"inspect"}, failingReader{})
	if code != 1 || !strings.Contains(errOut, "reading stdin") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func run2(args []string, stdin io.Reader) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, stdin, &out, &errOut)
	return code, out.String(), errOut.String()
}

// Times outside the format's range clamp: bounds says so and exits 0.
func TestBoundsClamp(t *testing.T) {
	code, out, errOut := runCLI("", "bounds", "2020-01-01T00:00:00Z", "2400-01-01T00:00:00Z")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "from  2020-01-01T00:00:00.000Z  id >= 0000000000001 (1)  (before the epoch 2024-01-01T00:00:00.000Z: clamped to the first ID)\n" +
		"to    2400-01-01T00:00:00.000Z  id <  7ZZZZZZZZZZZZ (9223372036854775807)  (past the last time an ID holds, 2302-09-27T15:10:22.207Z: clamped to the last ID)\n" +
		"WHERE id >= 1 AND id < 9223372036854775807\n"
	if out != want {
		t.Fatalf("got\n%s", out)
	}
}
