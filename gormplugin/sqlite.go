package gormplugin

import (
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/migrator"
	"gorm.io/gorm/schema"
)

// SQLite, unlike PostgreSQL, lets a PRIMARY KEY column that is not an
// INTEGER PRIMARY KEY hold NULL. On SQLite the plugin therefore wraps the
// dialector, so that the migrator declares an ID primary key NOT NULL. The
// wrapper forwards everything else, the optional interfaces GORM looks for
// included; Unwrap returns the dialector it wraps.

// dialector is the wrapped SQLite dialector.
type dialector interface {
	gorm.Dialector
	gorm.ErrorTranslator
	gorm.SavePointerDialectorInterface
}

// notNullKeys wraps a SQLite dialector.
type notNullKeys struct{ dialector }

// Unwrap returns the dialector the plugin wrapped, for code that asks for
// the driver's own type.
func (d notNullKeys) Unwrap() gorm.Dialector { return d.dialector }

// Migrator returns the wrapped dialector's migrator, which declares ID
// primary keys NOT NULL.
func (d notNullKeys) Migrator(db *gorm.DB) gorm.Migrator {
	return notNullMigrator{d.dialector.Migrator(db)}
}

// wrapSQLite wraps db's dialector when it is SQLite's.
func wrapSQLite(db *gorm.DB) {
	if _, done := db.Dialector.(notNullKeys); done || db.Dialector.Name() != "sqlite" {
		return
	}
	d, ok := db.Dialector.(dialector)
	if !ok {
		return
	}
	if _, ok := d.Migrator(db).(migrator.BuildIndexOptionsInterface); !ok {
		return
	}
	db.Dialector = notNullKeys{d}
}

type notNullMigrator struct{ gorm.Migrator }

// FullDataTypeOf adds NOT NULL to an ID primary key.
func (m notNullMigrator) FullDataTypeOf(f *schema.Field) clause.Expr {
	expr := m.Migrator.FullDataTypeOf(f)
	if f.PrimaryKey && !f.NotNull && isIDType(f.FieldType) {
		expr.SQL += " NOT NULL"
	}
	return expr
}

// BuildIndexOptions forwards to the wrapped migrator, which GORM asks for it.
func (m notNullMigrator) BuildIndexOptions(opts []schema.IndexOption, stmt *gorm.Statement) []any {
	return m.Migrator.(migrator.BuildIndexOptionsInterface).BuildIndexOptions(opts, stmt)
}
