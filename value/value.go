// Package value defines StructuredValue, the only kind of data that crosses
// the boundary between a guest program and its host: inputs, capability
// arguments, resume values and results.
package value

// Kind identifies the variant held by a Value.
type Kind uint8

const (
	KindUndefined Kind = iota
	KindNull
	KindHole // an array hole; only valid as an element of an Array
	KindBool
	KindString
	KindNumber
	KindArray
	KindObject
)

// MaxDepth is the deepest nesting of arrays and objects a Value may have
// when it crosses the boundary.
const MaxDepth = 128

// MaxArrayLength is the largest array that may cross the boundary.
const MaxArrayLength = 1_000_000

// Value is a structured value. The zero Value is Undefined.
//
// Strings hold the guest's UTF-16 text encoded as WTF-8: ordinary UTF-8,
// except that an unpaired surrogate code unit is kept as its 3-byte
// generalized UTF-8 sequence instead of being replaced, so no JavaScript
// string is ever altered on the way through.
type Value struct {
	Kind    Kind
	Bool    bool
	Num     float64
	Str     string
	Elems   []Value  // KindArray
	Members []Member // KindObject, in guest insertion order
}

// Member is one property of an Object value.
type Member struct {
	Key   string // WTF-8, like Value.Str
	Value Value
}

func Undefined() Value             { return Value{} }
func Null() Value                  { return Value{Kind: KindNull} }
func Hole() Value                  { return Value{Kind: KindHole} }
func Bool(b bool) Value            { return Value{Kind: KindBool, Bool: b} }
func String(s string) Value        { return Value{Kind: KindString, Str: s} }
func Number(f float64) Value       { return Value{Kind: KindNumber, Num: f} }
func Array(elems ...Value) Value   { return Value{Kind: KindArray, Elems: elems} }
func Object(ms ...Member) Value    { return Value{Kind: KindObject, Members: ms} }
func M(key string, v Value) Member { return Member{Key: key, Value: v} }
