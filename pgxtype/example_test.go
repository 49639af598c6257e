package pgxtype_test

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ulidflake/ulidflake"
	"github.com/ulidflake/ulidflake/pgxtype"
)

func ExampleRegister() {
	m := pgtype.NewMap() // conn.TypeMap() on a real connection
	pgxtype.Register(m)

	// IDs now travel as binary int8, with no boxing.
	buf, _ := m.Encode(pgtype.Int8OID, pgtype.BinaryFormatCode, ulidflake.MustParse("00EZJCRCB4650"), nil)
	var id ulidflake.ID
	err := m.Scan(pgtype.Int8OID, pgtype.BinaryFormatCode, buf, &id)
	fmt.Printf("%x %s %v\n", buf, id, err)
	// Output: 003bf26618b218a0 00EZJCRCB4650 <nil>
}

func ExampleAfterConnect() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return // needs a server
	}
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		panic(err)
	}
	cfg.AfterConnect = pgxtype.AfterConnect // every pooled connection knows the ID types
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		panic(err)
	}
	defer pool.Close()

	id, _ := ulidflake.NewWait(ctx)
	var back ulidflake.ID
	if err := pool.QueryRow(ctx, `SELECT $1::bigint`, id).Scan(&back); err != nil {
		panic(err)
	}
	rows, _ := pool.Query(ctx, `SELECT unnest($1::bigint[])`, []ulidflake.ID{id})
	ids, _ := pgx.CollectRows(rows, pgx.RowTo[ulidflake.ID])
	fmt.Println(back == id, ids[0] == id)
}
