package gormplugin_test

import (
	"testing"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/gormplugin"
)

// A map that holds no key gets it under the column name, where GORM puts
// a key the database made (#32); one that holds it under the field's name
// keeps that name.
func TestMapKeyUnderColumnName(t *testing.T) {
	db := openDB()
	if err := db.Use(gormplugin.New()); err != nil {
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
