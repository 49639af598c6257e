// Package entexample shows ent with Ulid-Flake IDs: the schemas in
// ent/schema use the mixins and the hook of package ulident, and ent/ is the
// code ent generates from them (regenerate with go generate ./ent).
// Customer's key is a prefixed ID, idtype.CustomerID, declared to ent with
// ulident.Alias.
package entexample
