//go:build goexperiment.jsonv2

package flake

import "encoding/json/jsontext"

// MarshalJSONTo implements encoding/json/v2's MarshalerTo (built with
// GOEXPERIMENT=jsonv2): the same JSON string as [ID.MarshalJSON], written
// to enc without allocating.
func (id ID) MarshalJSONTo(enc *jsontext.Encoder) error {
	if id < 0 {
		_, err := id.AppendText(nil) // the error of MarshalJSON
		return err
	}
	var b [TextLen + 2]byte
	b[0], b[len(b)-1] = '"', '"'
	id.encode((*[TextLen]byte)(b[1 : TextLen+1]))
	return enc.WriteValue(b[:])
}

// UnmarshalJSONFrom implements encoding/json/v2's UnmarshalerFrom (built
// with GOEXPERIMENT=jsonv2): it reads one JSON value from dec, without
// allocating for the 13-character string, and decodes it as
// [ID.UnmarshalJSON] does, with the same errors. json/v2 prefers it to
// UnmarshalJSON: a type that embeds ID and has an UnmarshalJSON of its own
// needs an UnmarshalJSONFrom of its own too, as [TrustedID] has.
func (id *ID) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return id.UnmarshalJSON(v)
}

// UnmarshalJSONFrom implements encoding/json/v2's UnmarshalerFrom for
// TrustedID, as [TrustedID.UnmarshalJSON] decodes: without it, json/v2
// would call the method promoted from ID, which refuses large numbers.
func (t *TrustedID) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return t.UnmarshalJSON(v)
}
