package bigserial

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ulidflake/ulidflake/migrations/internal/pgsql"
)

// checkLayout refuses a default the node would refuse at every insert:
// ulid_flake() on a node of a mesh (55U04), ulid_flake_scalable() on a
// node with no SID (23514). It reads the install's tables only, and runs
// none of its functions: ulid_flake_state.mesh (a SID, or other nodes'
// rows) and this node's row of ulid_flake_nodes, which holds its SID. An
// install before version 5 has neither, and no mesh.
func checkLayout(ctx context.Context, db *sql.DB, schema string, scalable bool) error {
	q := pgsql.QuoteIdent(schema)
	var mesh sql.NullBool
	var sid sql.NullInt64
	err := db.QueryRowContext(ctx, `SELECT s.mesh, n.sid FROM `+q+`.ulid_flake_state s
		LEFT JOIN `+q+`.ulid_flake_nodes n ON n.node_id OPERATOR(pg_catalog.=) s.node_id LIMIT 1`).Scan(&mesh, &sid)
	switch code := pgsql.SQLState(err); {
	case errors.Is(err, sql.ErrNoRows), code == "42P01", code == "42703":
		return nil
	case err != nil:
		return fmt.Errorf("bigserial: reading the node's SID from %s.ulid_flake_state: %w", q, err)
	case !scalable && mesh.Bool:
		return fmt.Errorf("%w: this database is a node of a mesh (a SID, or other nodes' rows in %s.ulid_flake_nodes), "+
			"where ulid_flake() makes no ID (55U04): convert to %s.ulid_flake_scalable() with WithScalable (ulidflake convert -scalable)",
			ErrConvert, q, q)
	case scalable && !sid.Valid:
		return fmt.Errorf("%w: this node has no SID, so %s.ulid_flake_scalable() would refuse every insert (23514): "+
			"give it one first, as the install's owner: SELECT %s.ulid_flake_set_sid(n), n from 0 to 31 and no other node's",
			ErrConvert, q, q)
	}
	return nil
}
