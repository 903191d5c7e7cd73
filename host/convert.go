package host

import (
	"reflect"

	"github.com/mustard-sidecar/mustard-sidecar/internal/convhook"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Undefined is JavaScript's undefined as a Go value: ValueOf (and
// value.FromGo) turn it into an Undefined StructuredValue and Decode into
// an `any` gives it back.
//
// Deprecated: use value.Undefined(), a value.Value that value.FromGo
// takes as itself and value.Decode puts in an `any`.
type Undefined struct{}

// Hole is an array hole (a missing element of a sparse array such as
// [1, , 3]) as a Go value, like Undefined. It is only valid as an element.
//
// Deprecated: use value.Hole(), a value.Value that value.FromGo takes as
// itself and value.Decode puts in an `any`.
type Hole struct{}

func init() {
	convhook.UndefinedType = reflect.TypeFor[Undefined]()
	convhook.HoleType = reflect.TypeFor[Hole]()
	convhook.Undefined = Undefined{}
	convhook.Hole = Hole{}
}

// ValueOf converts a Go value to a StructuredValue, as value.FromGo does.
//
// Deprecated: use value.FromGo.
func ValueOf(x any) (value.Value, error) { return value.FromGo(x) }

// MustValueOf is ValueOf for values known to convert; it panics on an
// error.
//
// Deprecated: use value.MustFromGo.
func MustValueOf(x any) value.Value { return value.MustFromGo(x) }

// Decode stores v in the Go value dst points to, as value.Decode does,
// except that an `any` gets Undefined{} and Hole{} for undefined and
// holes.
//
// Deprecated: use value.Decode, which puts value.Undefined() and
// value.Hole() in an `any`.
func Decode(v value.Value, dst any) error { return decodePath(v, dst, "value") }

func decodePath(v value.Value, dst any, path string) error {
	return convhook.DecodePath(v, dst, path)
}

// DecodeError is a value that does not fit the Go type it is decoded into.
//
// Deprecated: use value.DecodeError.
type DecodeError = value.DecodeError

// FromPlainJSON converts ordinary JSON to a StructuredValue.
//
// Deprecated: use value.FromPlainJSON.
func FromPlainJSON(b []byte) (value.Value, error) { return value.FromPlainJSON(b) }

// ToPlainJSON writes v as ordinary JSON.
//
// Deprecated: use value.ToPlainJSON.
func ToPlainJSON(v value.Value) ([]byte, error) { return value.ToPlainJSON(v) }
