//go:build tools

package protobufexample

import _ "google.golang.org/protobuf/cmd/protoc-gen-go"
