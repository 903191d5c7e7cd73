package value

import "math"

// Equal reports whether a and b are the same structured value: same kinds,
// numbers compared as by Object.is (NaN equals NaN, +0 differs from -0),
// arrays element by element and objects member by member in order. Fields
// that the kind does not use are ignored.
func Equal(a, b Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case KindBool:
		return a.Bool == b.Bool
	case KindString:
		return a.Str == b.Str
	case KindNumber:
		return sameNumber(a.Num, b.Num)
	case KindArray:
		if len(a.Elems) != len(b.Elems) {
			return false
		}
		for i := range a.Elems {
			if !Equal(a.Elems[i], b.Elems[i]) {
				return false
			}
		}
		return true
	case KindObject:
		if len(a.Members) != len(b.Members) {
			return false
		}
		for i := range a.Members {
			if a.Members[i].Key != b.Members[i].Key || !Equal(a.Members[i].Value, b.Members[i].Value) {
				return false
			}
		}
		return true
	}
	return true
}

// sameNumber is Object.is for numbers.
func sameNumber(x, y float64) bool {
	if x != x {
		return y != y
	}
	return x == y && math.Signbit(x) == math.Signbit(y)
}
