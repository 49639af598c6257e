// Package gormplugin fills Ulid-Flake primary keys on create, so that GORM
// models declare
//
//	type Order struct {
//		ID ulidflake.ID
//		...
//	}
//
// and get an ID with no hook to write:
//
//	db.Use(gormplugin.NewPlugin())
//	db.Create(&order) // order.ID is set before the INSERT
//
// # What it fills
//
// The plugin fills a model's own key: a single-column primary key of an ID
// type that is not a reference to another table. Before GORM's own
// before-create step, so that BeforeCreate hooks already see it, it gives
// that key a new ID when it is zero: on Create of a struct, a slice or
// array of structs or pointers, pointers to them, a map or a slice of maps;
// in CreateInBatches, Save of a new record, FirstOrCreate, and on the
// associations GORM creates in the same call (has-one, has-many, many2many,
// belongs-to). It never overwrites a non-zero ID.
//
// It never fills a reference, and never a part of a composite key (a
// composite key is made of references, as in a link table or a many2many
// join table): a reference is not the plugin's to invent. A reference
// that is zero fails the create with [flake.ErrZeroID] before the
// database sees it, so that nothing is written pointing at nothing.
// References are the foreign keys of the model's belongs-to associations,
// and the foreign keys that an owner's has-one or has-many association sets
// when GORM creates the model in the same call. A single-column key that
// refers to another table's key, declared only on the other model, is
// filled when the model is created on its own: declare the belongs-to
// association on the model too.
//
// Another ID field, outside the primary key, opts in with the struct tag
// ulidflake:"fill". On a reference or a part of a composite key the tag is
// refused with [ErrNotFillable]. [WithFields] replaces the rule that
// chooses the fields; it is asked only about ID fields that are not
// references and not parts of a composite key.
//
// ID fields are those of type ulidflake.ID, a prefixed ID
// (ulidflake.Prefixed[P]), a per-entity ID type declared as a struct that
// embeds ulidflake.ID and nothing else (type CustomerID struct{
// ulidflake.ID }), or pointers to them (a nil pointer is filled). Their GormDataType is bigint, so
// AutoMigrate creates a plain bigint primary key (not bigserial, not
// identity) and GORM neither skips the key on INSERT nor asks for RETURNING
// id.
//
// # Upserts: the ID in memory is the row's
//
// With an ON CONFLICT clause, a row may not be inserted: it keeps the ID it
// already had (DO UPDATE), or nothing is written (DO NOTHING). After every
// create, the key in memory is the key of the row in the database, or zero
// where the database does not say which row it is. With DO UPDATE the
// plugin asks for RETURNING of the key (PostgreSQL and SQLite). With DO
// UPDATE WHERE on conflict columns, whose RETURNING leaves out the rows
// the WHERE skips, it returns the conflict columns too and gives each
// struct the key of its row (the one carrying the key it sent, else the
// one with the conflict columns it sent), or zero when its update was
// skipped or the database does not say which row is its. With DO NOTHING, when fewer rows were written than
// given, and with DO UPDATE WHERE on maps or a constraint name, it looks up
// which of the values' keys (as they are after BeforeCreate hooks: made by
// the plugin, set by the caller or by a hook) are in the table the INSERT
// wrote to, named as the statement names it (db.Table("shop.accounts"),
// a TableName method), in the statement's transaction, and zeroes the
// others (a pointer key becomes nil). Children of a value whose key is
// zeroed are then refused (flake.ErrZeroID), never written pointing at
// nothing. This holds for the associations GORM creates in the same call
// (it creates belongs-to and many-to-many rows with ON CONFLICT DO
// NOTHING, has-one and has-many rows with DO UPDATE of their foreign key,
// and every row with DO UPDATE of every column under
// FullSaveAssociations).
//
// After a create that fails, every key the plugin filled in it and in the
// associations created with it is zero again (nil for a pointer; a map
// gets back what it held); keys the caller set stay. A rollback that comes
// later (the caller's transaction, a later batch of CreateInBatches) is
// not seen: the keys of the creates that succeeded before it stay.
//
// When the plugin is not registered, a zero ulidflake.ID key is
// not written as 0: its Value method fails the INSERT with
// flake.ErrZeroID.
//
// # NOT NULL keys
//
// A primary key column is NOT NULL in PostgreSQL. SQLite lets a key that is
// not an INTEGER PRIMARY KEY hold NULL, so on SQLite the plugin wraps the
// dialector (db.Dialector; Unwrap returns the driver's own) and AutoMigrate
// declares an ID key NOT NULL. Register the plugin before AutoMigrate: a
// table created without it keeps a nullable key, which AutoMigrate does not
// change (tag the field gorm:"not null" there, and rebuild the table).
//
// Not supported: creates without a model (db.Table("t").Create(map)),
// where GORM knows no key to fill. The key is whatever the map holds; a
// missing one is refused by the NOT NULL key column.
//
// When a millisecond's IDs are used up, the plugin waits for the next one,
// honouring the statement's context: overflow is never an error for the
// caller, and never a duplicate. If the context ends first, the create fails
// with the context's error and writes nothing. (GORM joins errors that
// follow it, such as the rolled-back transaction's, with %v; errors.Is then
// no longer sees the context's error, but the message names it.)
package gormplugin

import (
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"

	"github.com/ulidflake/ulidflake/flake"
)

// ErrNotFillable: the tag ulidflake:"fill" is on a field the plugin never
// fills, a reference or a part of a composite key. The create fails and
// writes nothing.
var ErrNotFillable = errors.New("gormplugin: ulidflake:\"fill\" on a reference or a part of a composite key, " +
	"which the plugin never fills: set it from the row it refers to")

// Plugin is a gorm.Plugin that fills ID fields on create.
type Plugin struct {
	src    flake.Source
	fields func(*schema.Field) bool
	err    error
}

// Option configures a [Plugin].
type Option func(*Plugin)

// WithSource sets where the IDs come from (flake.Source): a
// *ulidflake.Generator with the layout, SID, epoch and entropy of its
// options, a *sidlease.Lease whose SID PostgreSQL holds, or a
// *blocks.Source, which hands out IDs from blocks PostgreSQL reserves.
// Default: a stand-alone generator with the default epoch. A nil s is an
// error wrapping flake.ErrOption, when the plugin is registered.
func WithSource(s flake.Source) Option {
	return func(p *Plugin) {
		p.src = s
		if s == nil {
			p.err = fmt.Errorf("%w: gormplugin.WithSource(nil): want a generator, a lease or a block source", flake.ErrOption)
		}
	}
}

// WithFields replaces the rule that chooses the fields to fill (by default:
// [DefaultFields]). It is asked only about fields of an ID type that are
// neither references nor parts of a composite key. A nil fill is an error
// wrapping flake.ErrOption, when the plugin is registered.
func WithFields(fill func(*schema.Field) bool) Option {
	return func(p *Plugin) {
		p.fields = fill
		if fill == nil {
			p.err = fmt.Errorf("%w: gormplugin.WithFields(nil): want a rule", flake.ErrOption)
		}
	}
}

// DefaultFields is the default rule: the primary key (the plugin asks only
// about a single-column one), and fields tagged ulidflake:"fill".
func DefaultFields(f *schema.Field) bool {
	return f.PrimaryKey || tagged(f)
}

// tagged reports whether f has the tag ulidflake:"fill".
func tagged(f *schema.Field) bool { return f.Tag.Get("ulidflake") == "fill" }

// NewPlugin returns the plugin; pass it to db.Use. An invalid option (nil)
// makes db.Use return an error wrapping flake.ErrOption that names it.
func NewPlugin(opts ...Option) *Plugin {
	p := &Plugin{fields: DefaultFields}
	for i, o := range opts {
		if o == nil {
			p.err = fmt.Errorf("%w: gormplugin option %d is nil", flake.ErrOption, i)
			return p
		}
		o(p)
	}
	if p.err == nil && p.src == nil {
		p.src, p.err = flake.NewGenerator()
	}
	return p
}

// Name implements gorm.Plugin.
func (*Plugin) Name() string { return "ulidflake" }

// Initialize implements gorm.Plugin: it registers the create callbacks
// (ulidflake:fill_ids before GORM's BeforeCreate hooks, then
// ulidflake:snapshot, ulidflake:correct_ids after the INSERT and
// ulidflake:undo_fills after the commit or rollback) and, before queries,
// updates, deletes and raw rows, ulidflake:refuse_anded_ids
// ([ErrIDsANDed]), and on SQLite wraps the dialector so that AutoMigrate
// declares ID keys NOT NULL.
func (p *Plugin) Initialize(db *gorm.DB) error {
	if p.err != nil {
		return p.err
	}
	wrapSQLite(db)
	for _, s := range createSteps(p) {
		if err := db.Callback().Create().After(s.after).Before(s.before).Register(s.name, s.fn); err != nil {
			return err
		}
	}
	for _, err := range []error{
		db.Callback().Query().Before("gorm:query").Register("ulidflake:refuse_anded_ids", refuseANDedIDs),
		db.Callback().Update().Before("gorm:update").Register("ulidflake:refuse_anded_ids", refuseANDedIDs),
		db.Callback().Delete().Before("gorm:delete").Register("ulidflake:refuse_anded_ids", refuseANDedIDs),
		db.Callback().Row().Before("gorm:row").Register("ulidflake:refuse_anded_ids", refuseANDedIDs),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// createSteps are the plugin's create callbacks, each between two of
// GORM's, in the order they run. They share the statement's [create]:
//   - fill, before the BeforeCreate hooks, which see the keys: makes it,
//     fills the keys and plans the correction of an upsert;
//   - snapshot, just before the INSERT (after the hooks and the belongs-to
//     associations): copies the values that realign puts back in place;
//   - correct, after the INSERT and before the has-one, has-many and
//     many2many associations, which then see the corrected keys;
//   - finish, last, after the commit or rollback: undoes the fills of a
//     create that failed.
func createSteps(p *Plugin) []step {
	return []step{
		{"ulidflake:fill_ids", "", "gorm:before_create", p.fill},
		{"ulidflake:snapshot", "gorm:save_before_associations", "gorm:create", snapshot},
		{"ulidflake:correct_ids", "gorm:create", "gorm:save_after_associations", correct},
		{"ulidflake:undo_fills", "gorm:commit_or_rollback_transaction", "", finish},
	}
}

// step is a callback and its place: after one of GORM's callbacks and
// before another ("": anywhere on that side).
type step struct {
	name, after, before string
	fn                  func(*gorm.DB)
}
