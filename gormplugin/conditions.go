package gormplugin

import (
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/ulidflake/ulidflake/flake"
)

// ErrIDsANDed: a condition compares one column with two different IDs,
// ANDed (id = A AND id = B), which no row matches. GORM builds it from a
// slice of per-entity or prefixed IDs passed as a condition
// (db.Find(&orders, []OrderID{a, b})): it reads the slice as a slice of
// models and ANDs their fields. The statement fails instead of matching,
// updating or deleting nothing.
var ErrIDsANDed = errors.New("gormplugin: a condition ANDs two different IDs on one column, which matches no row " +
	"(GORM reads a slice of per-entity or prefixed IDs as models): pass []ulidflake.ID, or Where(\"id IN ?\", ids)")

// refuseANDedIDs is the callback of queries, updates, deletes and raw
// rows that refuses a WHERE whose top-level conjunction compares one column
// with two different IDs.
func refuseANDedIDs(db *gorm.DB) {
	c, ok := db.Statement.Clauses["WHERE"]
	if !ok || db.Error != nil {
		return
	}
	w, ok := c.Expression.(clause.Where)
	if !ok {
		return
	}
	seen := map[clause.Column]int64{}
	if col, a, b, found := andedKeys(w.Exprs, seen); found {
		_ = db.AddError(fmt.Errorf("%w: %s = %s AND %s = %s", ErrIDsANDed, col.Name, flake.ID(a), col.Name, flake.ID(b)))
	}
}

// andedKeys walks a conjunction (and the conjunctions inside it) for two
// equalities of one column with different IDs (of any ID type). GORM
// prints a conjunction that holds an OR (Where(a).Where(b).Or(c)) without
// parentheses, as a AND b OR c: such a level is left alone.
func andedKeys(exprs []clause.Expression, seen map[clause.Column]int64) (clause.Column, int64, int64, bool) {
	for _, e := range exprs {
		if _, ok := e.(clause.OrConditions); ok {
			return clause.Column{}, 0, 0, false
		}
	}
	for _, e := range exprs {
		switch e := e.(type) {
		case clause.AndConditions:
			if col, a, b, found := andedKeys(e.Exprs, seen); found {
				return col, a, b, true
			}
		case clause.Eq:
			id, ok := keyInt(e.Value)
			col, isCol := e.Column.(clause.Column)
			if !ok || !isCol {
				continue
			}
			if prev, ok := seen[col]; ok && prev != id {
				return col, prev, id, true
			}
			seen[col] = id
		}
	}
	return clause.Column{}, 0, 0, false
}
