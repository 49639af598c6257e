//go:build goexperiment.jsonv2

package flake

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"io"
	"testing"
)

func TestPrefixedJSONv2(t *testing.T) {
	id := customerID{MustParse("00EZJCRCB4650")}
	b, err := json.Marshal(struct{ ID customerID }{id})
	if err != nil || string(b) != `{"ID":"cus_00EZJCRCB4650"}` {
		t.Fatalf("json/v2 Marshal = %s, %v", b, err)
	}
	var back struct{ ID customerID }
	if err := json.Unmarshal(b, &back); err != nil || back.ID != id {
		t.Fatalf("json/v2 Unmarshal = %v, %v", back.ID, err)
	}
	if err := json.Unmarshal([]byte(`{"ID":"00EZJCRCB4650"}`), &back); !errors.Is(err, ErrPrefix) {
		t.Fatalf("json/v2 Unmarshal of an unprefixed ID = %v, want ErrPrefix", err)
	}
	enc := jsontext.NewEncoder(io.Discard)
	if n := testing.AllocsPerRun(1000, func() {
		if err := id.MarshalJSONTo(enc); err != nil {
			t.Fatal(err)
		}
	}); n > 0 {
		t.Errorf("MarshalJSONTo allocates %v times", n)
	}
}
