package value

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrNestingLimit is wrapped by the error for a value nested deeper than
// MaxDepth arrays and objects.
var ErrNestingLimit = errors.New("structured host boundary nesting limit exceeded")

// ErrArrayTooLong is wrapped by the error for an array longer than
// MaxArrayLength.
var ErrArrayTooLong = errors.New("arrays longer than " + strconv.Itoa(MaxArrayLength) + " elements cannot cross the structured host boundary")

// Error messages reach hosts, so they name the wire concepts only.
const errPrefix = "invalid StructuredValue: "

func invalidf(format string, args ...any) error {
	return fmt.Errorf(errPrefix+format, args...)
}

var (
	errNesting       = fmt.Errorf(errPrefix+"%w", ErrNestingLimit)
	errArrayTooLong  = fmt.Errorf(errPrefix+"%w", ErrArrayTooLong)
	errHolePlacement = errors.New(errPrefix + "Hole is only valid as an element of an Array")
)

// quoteSnippet quotes text taken from the input for an error message,
// shortened so a hostile input cannot make the message huge.
func quoteSnippet(s string) string {
	const limit = 64
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "..."
	}
	return strconv.Quote(s)
}

// position says where a value sits, because a Hole may only be an element.
type position uint8

const (
	posTop position = iota
	posElem
	posMember
)

// Validate reports whether v may cross the boundary: nesting at most
// MaxDepth arrays and objects, arrays at most MaxArrayLength long, Hole
// only directly inside an Array, known kinds, strings and keys well-formed
// WTF-8 and no duplicate keys in an object. The decoders only ever produce
// valid values; Validate is for values built in Go, and it checks exactly
// what the decoders would reject, so a valid value always round-trips.
func (v Value) Validate() error {
	return validate(v, 0, posTop)
}

func validate(v Value, depth int, pos position) error {
	switch v.Kind {
	case KindUndefined, KindNull, KindBool, KindNumber:
		return nil
	case KindHole:
		if pos != posElem {
			return errHolePlacement
		}
		return nil
	case KindString:
		if !ValidWTF8(v.Str) {
			return invalidf("string is not well-formed UTF-8")
		}
		return nil
	case KindArray:
		if depth >= MaxDepth {
			return errNesting
		}
		if len(v.Elems) > MaxArrayLength {
			return errArrayTooLong
		}
		for _, e := range v.Elems {
			if err := validate(e, depth+1, posElem); err != nil {
				return err
			}
		}
		return nil
	case KindObject:
		if depth >= MaxDepth {
			return errNesting
		}
		var keys keySet
		for i, m := range v.Members {
			if !ValidWTF8(m.Key) {
				return invalidf("object key is not well-formed UTF-8")
			}
			if !keys.add(v.Members[:i], m.Key) {
				return errDuplicateKey(m.Key)
			}
			if err := validate(m.Value, depth+1, posMember); err != nil {
				return err
			}
		}
		return nil
	}
	return invalidf("unknown kind %d", v.Kind)
}

func errDuplicateKey(key string) error {
	return invalidf("duplicate object key %s", quoteSnippet(key))
}

// smallObject is the member count up to which duplicate keys are found by
// a linear scan, which beats hashing for the objects usually seen.
const smallObject = 32

// keySet detects duplicate keys while an object is built, staying
// linear-time for hostile inputs with many keys.
type keySet struct {
	m map[string]struct{}
}

// add reports whether key is absent from prev, the members already
// accepted, and records it. Callers append key's member after each
// successful add.
func (ks *keySet) add(prev []Member, key string) bool {
	if ks.m == nil {
		if len(prev) < smallObject {
			for i := range prev {
				if prev[i].Key == key {
					return false
				}
			}
			return true
		}
		ks.m = make(map[string]struct{}, 2*len(prev))
		for i := range prev {
			ks.m[prev[i].Key] = struct{}{}
		}
	}
	if _, dup := ks.m[key]; dup {
		return false
	}
	ks.m[key] = struct{}{}
	return true
}
