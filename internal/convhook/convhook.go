// Package convhook joins package value's Go conversion to the older Go
// forms of undefined and array holes, host.Undefined and host.Hole, which
// package value cannot import.
package convhook

import "reflect"

// UndefinedType and HoleType are host.Undefined and host.Hole, set by
// package host when it is linked: value.FromGo takes them as undefined
// and a hole.
var UndefinedType, HoleType reflect.Type

// Undefined and Hole are host.Undefined{} and host.Hole{}, set by package
// host: what DecodePath puts in an `any` for undefined and holes.
var Undefined, Hole any

// DecodePath is value.Decode naming the value path in its errors, with
// Undefined and Hole in an `any` for undefined and holes. v is a
// value.Value. Set by package value.
var DecodePath func(v any, dst any, path string) error
