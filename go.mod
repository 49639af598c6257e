module github.com/ulidflake/ulidflake

go 1.25.0
