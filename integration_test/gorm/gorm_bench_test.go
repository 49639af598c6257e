package gorm_test

import (
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/ulidflake/ulidflake/gormplugin"
	"github.com/ulidflake/ulidflake/internal/pgtest"
)

// BenchmarkGormCreate compares, on each server, a model keyed by
// ulidflake.ID with the plugin against the same model keyed by bigserial:
// a single-row Create, and CreateInBatches of 1000 (reported per row).
func BenchmarkGormCreate(b *testing.B) {
	for _, s := range pgtest.Servers(b) {
		pdb := s.NewDB(b)
		db, err := gorm.Open(postgres.Open(pdb.URL), &gorm.Config{Logger: logger.Discard, SkipDefaultTransaction: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Use(gormplugin.NewPlugin()); err != nil {
			b.Fatal(err)
		}
		if err := db.AutoMigrate(&Plain{}, &Serial{}); err != nil {
			b.Fatal(err)
		}
		b.Run(s.Name+"/single/bigserial", func(b *testing.B) {
			for b.Loop() {
				if err := db.Create(&Serial{Name: "x"}).Error; err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(s.Name+"/single/ulidflake", func(b *testing.B) {
			for b.Loop() {
				if err := db.Create(&Plain{Name: "x"}).Error; err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(s.Name+"/batch1000/bigserial", func(b *testing.B) {
			for b.Loop() {
				rows := make([]Serial, 1000)
				if err := db.CreateInBatches(&rows, 1000).Error; err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(s.Name+"/batch1000/ulidflake", func(b *testing.B) {
			for b.Loop() {
				rows := make([]Plain, 1000)
				if err := db.CreateInBatches(&rows, 1000).Error; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
