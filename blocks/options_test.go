package blocks

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ulidflake/ulidflake/flake"
)

func TestOptionsRefused(t *testing.T) {
	for _, o := range []Option{WithSize(0), WithSize(MaxSize + 1), WithValidity(time.Microsecond), WithTimeout(-1),
		WithSchema(""), WithSchema(strings.Repeat("s", 64)), WithSchema("a\x00b"), WithSchema("\xff")} {
		if _, err := newOptions([]Option{o}); !errors.Is(err, flake.ErrOption) {
			t.Errorf("got %v, want flake.ErrOption", err)
		}
	}
	if o, err := newOptions([]Option{WithSize(MaxSize), WithSchema(`we"ird`)}); err != nil || o.size != MaxSize {
		t.Errorf("got %+v, %v", o, err)
	}
}

func TestQuoteIdent(t *testing.T) {
	if got := quoteIdent(`a"b`); got != `"a""b"` {
		t.Errorf("quoteIdent: %s", got)
	}
}

func TestParseBlock(t *testing.T) {
	ids, err := parseBlock("5,7,9", 3)
	if err != nil || len(ids) != 3 || ids[2] != 9 {
		t.Fatalf("got %v, %v", ids, err)
	}
	for _, bad := range []string{"5,7", "5,5,9", "9,7,5", "5,x,9", "0,1,2", ""} {
		if _, err := parseBlock(bad, 3); err == nil {
			t.Errorf("parseBlock(%q) accepted", bad)
		}
	}
}
