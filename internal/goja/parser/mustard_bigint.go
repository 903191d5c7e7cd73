package parser

import (
	"math/big"
	"strings"
)

// BigInt literals (a mustard-sidecar addition to goja; see PATCHES.md).
// math/big's SetString takes time quadratic in the digits for a radix that
// is not a power of two: compiling a literal of 400,000 decimal digits took
// 0.49 s, of a million 3.2 s, of 4 MiB 30 s, and of a million octal
// digits 2.75 s.

// ParseBigIntDigits, when set, is the value of digits (each a valid digit
// of radix 2, 8, 10 or 16, no prefix, sign or separator). goja sets it to
// its subquadratic parse, the one BigInt(string) uses (mustard_bignum.go);
// unset, literals are parsed by math/big alone.
var ParseBigIntDigits func(digits string, radix int) *big.Int

// bigIntLiteral is the value of a BigInt literal without its n: decimal
// digits, or 0x, 0o or 0b and digits, with separators between digits; ok
// is false for anything else.
func bigIntLiteral(literal string) (value *big.Int, ok bool) {
	radix, digits := 10, literal
	if len(literal) > 1 && literal[0] == '0' {
		switch literal[1] {
		case 'x', 'X':
			radix = 16
		case 'o', 'O':
			radix = 8
		case 'b', 'B':
			radix = 2
		default:
			return nil, false // legacy octal: no BigInt
		}
		digits = literal[2:]
	}
	if ParseBigIntDigits == nil || digits == "" || digits[0] == '_' || digits[len(digits)-1] == '_' || strings.Contains(digits, "__") {
		return new(big.Int).SetString(literal, 0)
	}
	for i := 0; i < len(digits); i++ {
		if c := digits[i]; c != '_' && digitValue(rune(c)) >= radix {
			return nil, false
		}
	}
	if strings.IndexByte(digits, '_') >= 0 {
		digits = strings.ReplaceAll(digits, "_", "")
	}
	return ParseBigIntDigits(digits, radix), true
}
