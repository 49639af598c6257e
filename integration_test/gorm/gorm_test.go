package gorm_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/flake"
	"github.com/ulidflake/ulidflake/gormplugin"
	"github.com/ulidflake/ulidflake/integration_test/itest"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// The models of the GORM tests.
type (
	Customer struct {
		ID       ulidflake.ID
		Name     string
		Profile  Profile // has one
		Orders   []Order // has many
		Tags     []Tag   `gorm:"many2many:customer_tags"`
		Region   *Region // belongs to
		RegionID ulidflake.NullID
		SeenID   ulidflake.ID `ulidflake:"fill"` // opted in, not a key
		hookSaw  ulidflake.ID
	}
	Profile struct {
		ID         ulidflake.ID
		CustomerID ulidflake.ID
		Bio        string
	}
	Order struct {
		ID         ulidflake.ID
		CustomerID ulidflake.ID
		Total      int
	}
	Tag struct {
		ID   ulidflake.ID
		Name string
	}
	Region struct {
		ID   ulidflake.ID
		Name string
	}
	// Line has a composite key of two IDs.
	Line struct {
		OrderID ulidflake.ID `gorm:"primaryKey"`
		LineID  flake.ID     `gorm:"primaryKey"`
		Qty     int
	}
	// Plain has only a key.
	Plain struct {
		ID   ulidflake.ID
		Name string
	}
	// Serial is the bigserial baseline of the benchmark.
	Serial struct {
		ID   int64 `gorm:"primaryKey;autoIncrement"`
		Name string
	}
)

func (c *Customer) BeforeCreate(*gorm.DB) error {
	c.hookSaw = c.ID
	return nil
}

var gormModels = []any{&Region{}, &Customer{}, &Profile{}, &Order{}, &Tag{}, &Line{}, &Plain{}, &Serial{}}

// gormRun runs fn on every backend: each Postgres server of the harness,
// then SQLite. plugin says whether the plugin is registered.
func gormRun(t *testing.T, plugin bool, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	open := func(t *testing.T, d gorm.Dialector) *gorm.DB {
		db, err := gorm.Open(d, &gorm.Config{Logger: logger.Discard})
		require.NoError(t, err)
		if plugin {
			require.NoError(t, db.Use(gormplugin.NewPlugin()))
		}
		require.NoError(t, db.AutoMigrate(gormModels...))
		return db
	}
	pgtest.Run(t, func(t *testing.T, pdb *pgtest.DB) {
		t.Parallel()
		fn(t, open(t, postgres.Open(pdb.URL)))
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		db := open(t, sqlite.Open(filepath.Join(t.TempDir(), "test.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"))
		sdb, err := db.DB()
		require.NoError(t, err)
		sdb.SetMaxOpenConns(1) // one writer
		t.Cleanup(func() { sdb.Close() })
		fn(t, db)
	})
}

func TestGormCreateFillsIDs(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		start := time.Now().Add(-time.Millisecond)
		c := Customer{
			Name:    "Ada",
			Profile: Profile{Bio: "engineer"},
			Orders:  []Order{{Total: 10}, {Total: 20}},
			Tags:    []Tag{{Name: "vip"}, {Name: "eu"}},
			Region:  &Region{Name: "north"},
		}
		require.NoError(t, db.Create(&c).Error)
		require.False(t, c.ID.IsZero())
		require.Equal(t, c.ID, c.hookSaw, "BeforeCreate must see the ID")
		require.False(t, c.SeenID.IsZero(), "opted-in field")
		require.True(t, ulidflake.DefaultEpoch().Time(c.ID).After(start.Truncate(time.Millisecond)) || ulidflake.DefaultEpoch().Time(c.ID).Equal(start.Truncate(time.Millisecond)))
		require.False(t, c.Profile.ID.IsZero())
		require.Equal(t, c.ID, c.Profile.CustomerID)
		for _, o := range c.Orders {
			require.False(t, o.ID.IsZero())
			require.Equal(t, c.ID, o.CustomerID)
		}
		require.False(t, c.Tags[0].ID.IsZero())
		require.False(t, c.Tags[1].ID.IsZero())
		require.False(t, c.Region.ID.IsZero())
		require.True(t, c.RegionID.Valid)
		require.Equal(t, c.Region.ID, c.RegionID.ID)

		var back Customer
		require.NoError(t, db.Preload("Profile").Preload("Orders").Preload("Tags").Preload("Region").First(&back, "id = ?", c.ID).Error)
		require.Equal(t, c.ID, back.ID)
		require.Equal(t, c.Profile.ID, back.Profile.ID)
		require.Len(t, back.Orders, 2)
		require.Len(t, back.Tags, 2)
		require.Equal(t, c.Region.ID, back.Region.ID)

		// A non-zero ID is never overwritten.
		fixed := ulidflake.MustParse("00EZJCRCB4650")
		p := Plain{ID: fixed, Name: "fixed"}
		require.NoError(t, db.Create(&p).Error)
		require.Equal(t, fixed, p.ID)
	})
}

func TestGormCreateShapes(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		slice := []Plain{{Name: "a"}, {Name: "b"}}
		require.NoError(t, db.Create(&slice).Error)
		ptrs := []*Plain{{Name: "c"}, {Name: "d"}}
		require.NoError(t, db.Create(ptrs).Error)
		arr := [2]Plain{{Name: "e"}, {Name: "f"}}
		require.NoError(t, db.Create(&arr).Error)
		one := &Plain{Name: "g"}
		require.NoError(t, db.Create(&one).Error) // pointer to pointer

		var ids []ulidflake.ID
		for _, p := range slice {
			ids = append(ids, p.ID)
		}
		for _, p := range ptrs {
			ids = append(ids, p.ID)
		}
		for _, p := range arr {
			ids = append(ids, p.ID)
		}
		ids = append(ids, one.ID)
		for _, id := range ids {
			require.False(t, id.IsZero())
		}
		require.Len(t, slices.Compact(slices.Sorted(slices.Values(ids))), 7)

		// Save of a new record, FirstOrCreate.
		s := Plain{Name: "saved"}
		require.NoError(t, db.Save(&s).Error)
		require.False(t, s.ID.IsZero())
		var f Plain
		require.NoError(t, db.Where(Plain{Name: "first-or-create"}).FirstOrCreate(&f).Error)
		require.False(t, f.ID.IsZero())
		var again Plain
		require.NoError(t, db.Where(Plain{Name: "first-or-create"}).FirstOrCreate(&again).Error)
		require.Equal(t, f.ID, again.ID)

		// From a map, and a slice of maps: the key is filled.
		require.NoError(t, db.Model(&Plain{}).Create(map[string]any{"Name": "map"}).Error)
		require.NoError(t, db.Model(&Plain{}).Create([]map[string]any{{"Name": "map2"}, {"name": "map3"}}).Error)
		var fromMaps []Plain
		require.NoError(t, db.Where("name IN ?", []string{"map", "map2", "map3"}).Find(&fromMaps).Error)
		require.Len(t, fromMaps, 3)
		for _, p := range fromMaps {
			require.False(t, p.ID.IsZero())
		}

		// Composite keys are references: never filled, a zero part refused.
		line := Line{Qty: 3}
		require.ErrorIs(t, db.Create(&line).Error, ulidflake.ErrZeroID)
		require.True(t, line.OrderID.IsZero())
		require.True(t, line.LineID.IsZero())
		line = Line{OrderID: slice[0].ID, LineID: flake.ID(slice[1].ID), Qty: 3}
		require.NoError(t, db.Create(&line).Error)
		require.Equal(t, slice[0].ID, line.OrderID)

		// No row has a zero key.
		var zeros int64
		require.NoError(t, db.Model(&Plain{}).Where("id = 0").Count(&zeros).Error)
		require.Zero(t, zeros)
	})
}

func TestGormCreateInBatches(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		rows := make([]Plain, 12_000)
		for i := range rows {
			rows[i].Name = fmt.Sprint(i)
		}
		require.NoError(t, db.CreateInBatches(&rows, 1000).Error)
		seen := map[ulidflake.ID]bool{}
		for i, r := range rows {
			require.False(t, r.ID.IsZero(), "row %d", i)
			require.False(t, seen[r.ID], "duplicate %s", r.ID)
			seen[r.ID] = true
		}
		var n int64
		require.NoError(t, db.Model(&Plain{}).Count(&n).Error)
		require.EqualValues(t, len(rows), n)
		// Creation order is key order: generation is monotonic.
		var names []string
		require.NoError(t, db.Model(&Plain{}).Order("id").Limit(5).Pluck("name", &names).Error)
		require.Equal(t, []string{"0", "1", "2", "3", "4"}, names)
	})
}

func TestGormSchemaAndSQL(t *testing.T) {
	t.Parallel()
	pgtest.Run(t, func(t *testing.T, pdb *pgtest.DB) {
		t.Parallel()
		db, err := gorm.Open(postgres.Open(pdb.URL), &gorm.Config{Logger: logger.Discard})
		require.NoError(t, err)
		require.NoError(t, db.Use(gormplugin.NewPlugin()))
		require.NoError(t, db.AutoMigrate(&Plain{}))
		var dataType, isIdentity string
		var def *string
		require.NoError(t, db.Raw(`SELECT data_type, column_default, is_identity FROM information_schema.columns
			WHERE table_name = 'plains' AND column_name = 'id'`).Row().Scan(&dataType, &def, &isIdentity))
		require.Equal(t, "bigint", dataType)
		require.Nil(t, def, "no sequence default")
		require.Equal(t, "NO", isIdentity)

		stmt := db.Session(&gorm.Session{DryRun: true}).Create(&Plain{Name: "x"}).Statement
		require.NotContains(t, stmt.SQL.String(), "RETURNING")
		require.Contains(t, stmt.SQL.String(), `"id"`)
	})
}

func TestGormWithoutPluginFailsLoudly(t *testing.T) {
	t.Parallel()
	gormRun(t, false, func(t *testing.T, db *gorm.DB) {
		err := db.Create(&Plain{Name: "no key"}).Error
		require.ErrorIs(t, err, ulidflake.ErrZeroID)
		var n int64
		require.NoError(t, db.Model(&Plain{}).Count(&n).Error)
		require.Zero(t, n)
	})
}

func TestGormOverflowWaits(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		// The scalable layout with entropy 2 fits about one ID per
		// millisecond: 300 rows need waits, and none may fail or repeat.
		g, err := ulidflake.NewGenerator(flake.WithSID(3), flake.WithEntropy(2))
		require.NoError(t, err)
		tx, err := gorm.Open(db.Dialector, &gorm.Config{Logger: logger.Discard})
		require.NoError(t, err)
		require.NoError(t, tx.Use(gormplugin.NewPlugin(gormplugin.WithSource(g))))
		rows := make([]Plain, 300)
		require.NoError(t, tx.Create(&rows).Error)
		seen := map[ulidflake.ID]bool{}
		for _, r := range rows {
			require.False(t, r.ID.IsZero())
			require.Equal(t, 3, r.ID.SID())
			require.False(t, seen[r.ID])
			seen[r.ID] = true
		}

		// A clock that never moves: the wait ends with the statement's context.
		at := time.Now()
		stuck, err := ulidflake.NewGenerator(flake.WithSID(3), flake.WithClock(func() time.Time { return at }))
		require.NoError(t, err)
		tx2, err := gorm.Open(db.Dialector, &gorm.Config{Logger: logger.Discard})
		require.NoError(t, err)
		require.NoError(t, tx2.Use(gormplugin.NewPlugin(gormplugin.WithSource(stuck))))
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		many := make([]Plain, 5000)
		err = tx2.WithContext(ctx).Create(&many).Error
		// GORM joins a later error (the rolled-back transaction) with %v, so
		// the message, not errors.Is, carries the cause.
		require.ErrorContains(t, err, context.DeadlineExceeded.Error())
		var n int64
		require.NoError(t, db.Model(&Plain{}).Count(&n).Error)
		require.EqualValues(t, len(rows), n, "nothing of the failed create is written")
	})
}

func TestGormConcurrentCreates(t *testing.T) {
	t.Parallel()
	gormRun(t, true, func(t *testing.T, db *gorm.DB) {
		// 8 writers on one plugin's generator, 20,000 creates (a quick run
		// 8,000): many IDs per millisecond from several writers at once
		// (80,000 took 18 s on PostgreSQL 18 alone).
		workers, each := 8, pgtest.Scale(2_500, 1_000)
		if db.Dialector.Name() == "sqlite" {
			each = 1_000 // one connection, one writer: 80,000 commits took 8 minutes under -race on a busy machine
		}
		db = db.Session(&gorm.Session{SkipDefaultTransaction: true})
		itest.RunWorkers(t, workers, func(w int) error {
			for i := range each {
				if err := db.Create(&Plain{Name: fmt.Sprintf("%d-%d", w, i)}).Error; err != nil {
					return err
				}
			}
			return nil
		})
		var n, distinct int64
		require.NoError(t, db.Raw(`SELECT count(*), count(DISTINCT id) FROM plains`).Row().Scan(&n, &distinct))
		require.EqualValues(t, workers*each, n)
		require.Equal(t, n, distinct)
	})
}

// sqlLog records the statements GORM runs.
type sqlLog struct {
	logger.Interface
	mu  sync.Mutex
	sql []string
}

func (l *sqlLog) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	sql, _ := fc()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sql = append(l.sql, sql)
}

func (l *sqlLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.sql
	l.sql = nil
	return s
}

// TestGormSQLiteKeysNotNull: on SQLite, where a non-INTEGER primary key may
// hold NULL, AutoMigrate with the plugin declares every ID key NOT NULL, a
// second AutoMigrate changes nothing, a create without a key is refused,
// and the wrapped dialector still translates errors and makes savepoints.
func TestGormSQLiteKeysNotNull(t *testing.T) {
	t.Parallel()
	log := &sqlLog{Interface: logger.Discard}
	db, err := gorm.Open(sqlite.Open(":memory:"), &gorm.Config{Logger: log, TranslateError: true})
	require.NoError(t, err)
	sdb, err := db.DB()
	require.NoError(t, err)
	sdb.SetMaxOpenConns(1)
	t.Cleanup(func() { sdb.Close() })
	require.NoError(t, db.Use(gormplugin.NewPlugin()))
	require.NoError(t, db.AutoMigrate(gormModels...))

	keys := map[string][]string{"customers": {"id"}, "profiles": {"id"}, "orders": {"id"}, "tags": {"id"},
		"regions": {"id"}, "lines": {"order_id", "line_id"}, "plains": {"id"}, "customer_tags": {"customer_id", "tag_id"}}
	for table, cols := range keys {
		for _, col := range cols {
			var notNull, pk int
			require.NoError(t, db.Raw(`SELECT "notnull", pk FROM pragma_table_info(?) WHERE name = ?`, table, col).Row().Scan(&notNull, &pk))
			require.Equal(t, 1, notNull, "%s.%s NOT NULL", table, col)
			require.NotZero(t, pk, "%s.%s in the key", table, col)
		}
	}
	var regionID int
	require.NoError(t, db.Raw(`SELECT "notnull" FROM pragma_table_info('customers') WHERE name = 'region_id'`).Row().Scan(&regionID))
	require.Zero(t, regionID, "a nullable column that is not a key stays nullable")

	log.take()
	require.NoError(t, db.AutoMigrate(gormModels...))
	for _, s := range log.take() {
		require.NotRegexp(t, `(?i)^\s*(CREATE|ALTER|DROP|INSERT)`, s, "a second AutoMigrate changed the schema")
	}

	err = db.Table("plains").Create(map[string]any{"name": "no key"}).Error
	require.ErrorContains(t, err, "NOT NULL constraint failed: plains.id")
	require.NoError(t, db.Create(&Plain{Name: "keyed"}).Error)
	var n int64
	require.NoError(t, db.Model(&Plain{}).Where("id IS NULL").Count(&n).Error)
	require.Zero(t, n)

	// The optional interfaces of the driver's dialector still work.
	p := Plain{Name: "dup"}
	require.NoError(t, db.Create(&p).Error)
	require.ErrorIs(t, db.Create(&Plain{ID: p.ID}).Error, gorm.ErrDuplicatedKey)
	require.NoError(t, db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, tx.Create(&Plain{Name: "outer"}).Error)
		require.Error(t, tx.Transaction(func(tx *gorm.DB) error {
			require.NoError(t, tx.Create(&Plain{Name: "inner"}).Error)
			return errors.New("roll back to the savepoint")
		}))
		return nil
	}))
	var names []string
	require.NoError(t, db.Model(&Plain{}).Where("name IN ?", []string{"outer", "inner"}).Pluck("name", &names).Error)
	require.Equal(t, []string{"outer"}, names)
	d, ok := db.Dialector.(interface{ Unwrap() gorm.Dialector })
	require.True(t, ok)
	require.IsType(t, &sqlite.Dialector{}, d.Unwrap())
}

// Every ID type as a GORM field: a second AutoMigrate issues no DDL, on
// PostgreSQL and SQLite, and a TextID is stored as text that a look-up by
// its string form finds.
type AllKinds struct {
	ID    ulidflake.TextID `gorm:"primaryKey"`
	Num   ulidflake.ID     `ulidflake:"fill"`
	Null  ulidflake.NullID
	Flake flake.ID `ulidflake:"fill"`
	Ptr   *ulidflake.ID
	Txt   ulidflake.TextID
}

func TestGormAutoMigrateStable(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, d gorm.Dialector) {
		log := &sqlLog{Interface: logger.Discard}
		db, err := gorm.Open(d, &gorm.Config{Logger: log})
		require.NoError(t, err)
		require.NoError(t, db.Use(gormplugin.NewPlugin()))
		require.NoError(t, db.AutoMigrate(&AllKinds{}))
		log.take()
		require.NoError(t, db.AutoMigrate(&AllKinds{}))
		for _, s := range log.take() {
			require.NotRegexp(t, `(?i)^\s*(CREATE|ALTER|DROP|INSERT)`, s, "a second AutoMigrate changed the schema")
		}
		id, err := ulidflake.New()
		require.NoError(t, err)
		txt, err := ulidflake.New()
		require.NoError(t, err)
		require.NoError(t, db.Create(&AllKinds{ID: ulidflake.TextID{ID: id}, Txt: ulidflake.TextID{ID: txt}}).Error)
		var got AllKinds
		require.NoError(t, db.First(&got, "id = ?", id.String()).Error)
		require.Equal(t, txt, got.Txt.ID)
		var n int64
		require.NoError(t, db.Model(&AllKinds{}).Where("txt = ?", txt.String()).Count(&n).Error)
		require.EqualValues(t, 1, n)
	}
	pgtest.Run(t, func(t *testing.T, pdb *pgtest.DB) {
		t.Parallel()
		run(t, postgres.Open(pdb.URL))
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		run(t, sqlite.Open(filepath.Join(t.TempDir(), "kinds.db")))
	})
}
