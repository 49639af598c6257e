//go:build goexperiment.jsonv2

package flake

import "encoding/json/jsontext"

// MarshalJSONTo implements encoding/json/v2's MarshalerTo (built with
// GOEXPERIMENT=jsonv2): the JSON string of [Prefixed.MarshalJSON]. Without
// it, json/v2 would call the method promoted from ID and drop the prefix.
func (p Prefixed[P]) MarshalJSONTo(enc *jsontext.Encoder) error {
	var buf [MaxPrefixLen + TextLen + 3]byte
	b, err := p.AppendText(append(buf[:0], '"'))
	if err != nil {
		return err
	}
	return enc.WriteValue(append(b, '"'))
}

// UnmarshalJSONFrom implements encoding/json/v2's UnmarshalerFrom (built
// with GOEXPERIMENT=jsonv2), as [Prefixed.UnmarshalJSON] decodes.
func (p *Prefixed[P]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return p.UnmarshalJSON(v)
}
