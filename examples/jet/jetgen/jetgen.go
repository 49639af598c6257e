// Package jetgen is the example's jet generator: jet's default template,
// customised so that the ID columns of the model structs are ulidflake
// types (Columns) and the ulidflake migrations' own tables are left out.
// jet reads the schema from a live database: the test in this package
// generates the code from a database set up by jetexample.Setup and checks
// that ../gen is what it makes (-update rewrites ../gen).
package jetgen

import (
	"database/sql"
	"strings"

	"github.com/go-jet/jet/v2/generator/metadata"
	jetpg "github.com/go-jet/jet/v2/generator/postgres"
	"github.com/go-jet/jet/v2/generator/template"
	"github.com/go-jet/jet/v2/postgres"
)

const idtypePath = "github.com/ulidflake/ulidflake/examples/jet/idtype"

var (
	customerID = template.Type{ImportPath: idtypePath, Name: "idtype.CustomerID"}
	invoiceID  = template.Type{ImportPath: idtypePath, Name: "idtype.InvoiceID"}
	plainID    = template.Type{ImportPath: "github.com/ulidflake/ulidflake", Name: "ulidflake.ID"}
)

// Columns maps table.column to the Go type of its model field: the keys,
// and the references to them. The columns are NOT NULL; a nullable one would
// take a pointer (Name: "*idtype.CustomerID") or ulidflake.NullID.
var Columns = map[string]template.Type{
	"customers.id":             customerID,
	"invoices.id":              invoiceID,
	"invoices.customer_id":     customerID,
	"invoice_lines.id":         plainID,
	"invoice_lines.invoice_id": invoiceID,
}

// internal reports the ulidflake migrations' tables (ulid_flake_migrations,
// ulid_flake_state, ...), which are not the application's.
func internal(t metadata.Table) bool { return strings.HasPrefix(t.Name, "ulid_flake_") }

// Template is jet's default template with the model fields of Columns typed
// as ulidflake IDs. The SQL builder keeps jet's ColumnInteger for them:
// compare with postgres.Int64(id.Int64()).
func Template() template.Template {
	return template.Default(postgres.Dialect).UseSchema(func(s metadata.Schema) template.Schema {
		return template.DefaultSchema(s).
			UseModel(template.DefaultModel().UseTable(func(t metadata.Table) template.TableModel {
				m := template.DefaultTableModel(t).UseField(func(c metadata.Column) template.TableModelField {
					f := template.DefaultTableModelField(c)
					if typ, ok := Columns[t.Name+"."+c.Name]; ok {
						f = f.UseType(typ)
					}
					return f
				})
				m.Skip = internal(t)
				return m
			})).
			UseSQLBuilder(template.DefaultSQLBuilder().UseTable(func(t metadata.Table) template.TableSQLBuilder {
				b := template.DefaultTableSQLBuilder(t)
				b.Skip = internal(t)
				return b
			}))
	})
}

// Generate writes the code for db's schema into dir (dir/model, dir/table).
func Generate(db *sql.DB, schema, dir string) error {
	return jetpg.GenerateDB(db, schema, dir, Template())
}
