//go:build tools

package graphqlexample

import (
	_ "github.com/99designs/gqlgen"
	_ "github.com/ulidflake/ulidflake/flake"
)
