package gormplugin_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/gormplugin"
)

// A map that holds no key gets it under the column name, where GORM puts
// a key the database made (#32); one that holds it under the field's name
// keeps that name.
func TestMapKeyUnderColumnName(t *testing.T) {
	db := openDB()
	if err := db.Use(gormplugin.NewPlugin()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m    map[string]any
		want string
	}{
		{map[string]any{"Name": "Ada"}, "id"},
		{map[string]any{"Name": "Ada", "ID": nil}, "ID"},
		{map[string]any{"Name": "Ada", "id": 0}, "id"},
	} {
		if err := db.Model(&Customer{}).Create(tc.m).Error; err != nil {
			t.Fatal(err)
		}
		if id, ok := tc.m[tc.want].(ulidflake.ID); !ok || id.IsZero() || len(tc.m) != 2 {
			t.Errorf("want a new key under %q, got %v", tc.want, tc.m)
		}
	}
}

// A nil option, source or rule makes db.Use fail with an error wrapping
// ErrOption that names it, and registers nothing.
func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		opt  gormplugin.Option
		name string
	}{
		{nil, "option 0 is nil"},
		{gormplugin.WithSource(nil), "WithSource(nil)"},
		{gormplugin.WithFields(nil), "WithFields(nil)"},
	} {
		err := openDB().Use(gormplugin.NewPlugin(tc.opt))
		if !errors.Is(err, ulidflake.ErrOption) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: got %v, want ErrOption naming it", tc.name, err)
		}
	}
}
