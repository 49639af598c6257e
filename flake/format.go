package flake

import "fmt"

// Format implements [fmt.Formatter], so that every verb prints what a
// reader expects of an ID:
//
//	%s %v     the 13-character text form, 00EZJCRCB4650
//	%q        the text form quoted, "00EZJCRCB4650" (%#q: back-quoted)
//	%d        the integer in decimal, 16873543940839584
//	%x %X     the integer in hex, 3bf26618b218a0 (%#x: 0x3bf26618b218a0)
//	%o %O %b  the integer in octal or binary
//
// Width, precision and flags apply as fmt applies them to a string (the
// text verbs) or an int64 (the integer verbs). %#v prints the quoted text
// form, as it appears in a struct printed with %#v. Any other verb prints
// %!verb(flake.ID=00EZJCRCB4650).
func (id ID) Format(f fmt.State, verb rune) {
	switch verb {
	case 's', 'v', 'q':
		if verb == 'v' && f.Flag('#') {
			fmt.Fprintf(f, "%q", id.String())
			return
		}
		fmt.Fprintf(f, fmt.FormatString(f, verb), id.String())
	case 'd', 'x', 'X', 'o', 'O', 'b':
		fmt.Fprintf(f, fmt.FormatString(f, verb), int64(id))
	default:
		fmt.Fprintf(f, "%%!%c(flake.ID=%s)", verb, id.String())
	}
}
