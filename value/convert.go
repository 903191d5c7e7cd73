package value

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/internal/convhook"
)

// maxSafeInteger is the largest integer every float64 below it represents
// exactly (Number.MAX_SAFE_INTEGER).
const maxSafeInteger = 1<<53 - 1

var (
	valueType     = reflect.TypeFor[Value]()
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	jsonUnmarsh   = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarsh   = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumber    = reflect.TypeFor[json.Number]()
)

// FromGo converts a Go value to a StructuredValue, in the manner of
// encoding/json:
//
//   - nil, nil pointers, nil slices and nil maps are Null; a Value is
//     itself, so Undefined() and Hole() are the Go forms of undefined and
//     an array hole (a Hole only as an element of an Array).
//   - bool and string are Bool and String (a string must be UTF-8, or
//     WTF-8 for lone surrogates).
//   - Integers are Numbers, and must be within ±(2^53−1), which a
//     JavaScript number holds exactly. float32 and float64 are Numbers,
//     NaN, ±Inf and −0 included: those are ordinary float64 values in Go
//     (math.NaN(), math.Inf(±1), math.Copysign(0, -1)).
//   - A json.Number is the Number its text reads as in JSON.parse (""
//     is 0, as encoding/json writes it; text that is not a JSON number
//     fails; one beyond float64's range is ±Inf).
//   - Slices and arrays are Arrays ([]byte is a base64 String, as in
//     encoding/json); maps with string or integer keys are Objects with
//     their keys sorted; structs are Objects of their exported fields in
//     declaration order, named and skipped by `json` tags ("name",
//     "-", omitempty, omitzero), with embedded structs' fields promoted.
//     The string option makes a bool, integer, float, string or
//     json.Number field (or a pointer to one) a String holding its JSON
//     text, as encoding/json writes it ("true", "123", "\"abc\""): an
//     integer of any size then crosses exactly; NaN and ±Inf, which have
//     no JSON text, fail.
//   - A type with a MarshalJSON method goes through its JSON (see
//     FromPlainJSON); one with MarshalText becomes a String.
//
// Channels, functions and complex numbers fail, as do values nested
// deeper than MaxDepth (which includes cycles).
func FromGo(x any) (Value, error) {
	v, err := toValue(reflect.ValueOf(x), 0)
	if err != nil {
		return Value{}, err
	}
	if err := v.Validate(); err != nil {
		return Value{}, err
	}
	return v, nil
}

// MustFromGo is FromGo for values known to convert, such as literals in
// tests and examples; it panics on an error.
func MustFromGo(x any) Value {
	v, err := FromGo(x)
	if err != nil {
		panic(err)
	}
	return v
}

func toValue(rv reflect.Value, depth int) (Value, error) {
	if !rv.IsValid() {
		return Null(), nil
	}
	if depth > MaxDepth {
		return Value{}, fmt.Errorf("%w (or a cycle)", ErrNestingLimit)
	}
	t := rv.Type()
	switch t {
	case valueType:
		return rv.Interface().(Value), nil
	case convhook.UndefinedType:
		return Undefined(), nil
	case convhook.HoleType:
		return Hole(), nil
	}
	if (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && rv.IsNil() {
		return Null(), nil
	}
	if rv.Kind() != reflect.Interface {
		if t.Implements(jsonMarshaler) {
			b, err := rv.Interface().(json.Marshaler).MarshalJSON()
			if err != nil {
				return Value{}, fmt.Errorf("%s.MarshalJSON: %w", t, err)
			}
			return FromPlainJSON(b)
		}
		if t.Implements(textMarshaler) {
			b, err := rv.Interface().(encoding.TextMarshaler).MarshalText()
			if err != nil {
				return Value{}, fmt.Errorf("%s.MarshalText: %w", t, err)
			}
			return String(string(b)), nil
		}
	}
	if t == jsonNumber {
		f, err := numberText(rv.String())
		if err != nil {
			return Value{}, err
		}
		return Number(f), nil
	}
	switch rv.Kind() {
	case reflect.Bool:
		return Bool(rv.Bool()), nil
	case reflect.String:
		return String(rv.String()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := rv.Int()
		if n > maxSafeInteger || n < -maxSafeInteger {
			return Value{}, fmt.Errorf("integer %d is beyond ±(2^53-1) and has no exact JavaScript number", n)
		}
		return Number(float64(n)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n := rv.Uint()
		if n > maxSafeInteger {
			return Value{}, fmt.Errorf("integer %d is beyond 2^53-1 and has no exact JavaScript number", n)
		}
		return Number(float64(n)), nil
	case reflect.Float32, reflect.Float64:
		return Number(rv.Float()), nil
	case reflect.Pointer, reflect.Interface:
		return toValue(rv.Elem(), depth)
	case reflect.Slice:
		if rv.IsNil() {
			return Null(), nil
		}
		if t.Elem().Kind() == reflect.Uint8 && !t.Elem().Implements(jsonMarshaler) {
			return String(base64.StdEncoding.EncodeToString(rv.Bytes())), nil
		}
		fallthrough
	case reflect.Array:
		n := rv.Len()
		if n > MaxArrayLength {
			return Value{}, ErrArrayTooLong
		}
		elems := make([]Value, n)
		for i := range n {
			e, err := toValue(rv.Index(i), depth+1)
			if err != nil {
				return Value{}, err
			}
			elems[i] = e
		}
		return Array(elems...), nil
	case reflect.Map:
		if rv.IsNil() {
			return Null(), nil
		}
		members := make([]Member, 0, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			k, err := mapKey(it.Key())
			if err != nil {
				return Value{}, err
			}
			e, err := toValue(it.Value(), depth+1)
			if err != nil {
				return Value{}, err
			}
			members = append(members, M(k, e))
		}
		slices.SortFunc(members, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
		return Object(members...), nil
	case reflect.Struct:
		fields := structFields(t)
		members := make([]Member, 0, len(fields))
		for _, f := range fields {
			fv, ok := fieldByIndex(rv, f.index)
			if !ok || (f.omitEmpty && isEmpty(fv)) || (f.omitZero && fv.IsZero()) {
				continue
			}
			var e Value
			var err error
			if f.quoted {
				e, err = quotedValue(fv, depth+1)
			} else {
				e, err = toValue(fv, depth+1)
			}
			if err != nil {
				return Value{}, err
			}
			members = append(members, M(f.name, e))
		}
		return Object(members...), nil
	}
	return Value{}, fmt.Errorf("a Go %s cannot cross the structured host boundary", t)
}

// numberText reads the text of a json.Number as JSON.parse does: "" is
// 0, as encoding/json writes it.
func numberText(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	if !isJSONNumber(s) {
		return 0, fmt.Errorf("json.Number %q is not a JSON number", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("json.Number %q: %w", s, err)
	}
	return f, nil // out of range: ±Inf, as JSON.parse
}

// isJSONNumber reports whether s is exactly a JSON number literal.
func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) || s[len(s)-1] < '0' || s[len(s)-1] > '9' {
		return false
	}
	return json.Valid([]byte(s))
}

// quotedValue is a struct field with the `json:",string"` option: the
// String of its JSON text, as encoding/json writes it. Types with their
// own MarshalJSON or MarshalText ignore the option, as there.
func quotedValue(rv reflect.Value, depth int) (Value, error) {
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return Null(), nil
		}
		rv = rv.Elem()
	}
	t := rv.Type()
	if t.Implements(jsonMarshaler) || t.Implements(textMarshaler) {
		return toValue(rv, depth)
	}
	if t == jsonNumber {
		s := rv.String()
		if s == "" {
			s = "0"
		}
		if !isJSONNumber(s) {
			return Value{}, fmt.Errorf("json.Number %q is not a JSON number", s)
		}
		return String(s), nil
	}
	switch rv.Kind() {
	case reflect.Bool:
		return String(strconv.FormatBool(rv.Bool())), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return String(strconv.FormatInt(rv.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return String(strconv.FormatUint(rv.Uint(), 10)), nil
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return Value{}, fmt.Errorf("%v has no JSON text for a `json:\",string\"` field", f)
		}
		b, err := json.Marshal(rv.Interface())
		if err != nil {
			return Value{}, err
		}
		return String(string(b)), nil
	case reflect.String:
		b, err := json.Marshal(rv.String())
		if err != nil {
			return Value{}, err
		}
		return String(string(b)), nil
	}
	return toValue(rv, depth)
}

func mapKey(k reflect.Value) (string, error) {
	switch k.Kind() {
	case reflect.String:
		return k.String(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", fmt.Errorf("a Go map with %s keys cannot cross the structured host boundary", k.Type())
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// fieldByIndex follows index through embedded pointers; ok is false when
// one of them is nil.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

type field struct {
	name      string
	index     []int
	tagged    bool
	omitEmpty bool
	omitZero  bool
	quoted    bool // the string option, on a field it applies to
}

var fieldCache sync.Map // reflect.Type → []field

// structFields lists t's fields as encoding/json names them: exported
// fields and the promoted fields of embedded structs; of several fields
// with one name the shallowest wins, then a tagged one, else none.
func structFields(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	type level struct {
		t     reflect.Type
		index []int
	}
	var all []field
	depthOf := map[string]int{}
	current := []level{{t: t}}
	seen := map[reflect.Type]bool{}
	for depth := 0; len(current) > 0; depth++ {
		var next []level
		for _, lv := range current {
			if seen[lv.t] {
				continue
			}
			seen[lv.t] = true
			for i := range lv.t.NumField() {
				sf := lv.t.Field(i)
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if name == "" && ft.Kind() == reflect.Struct {
						next = append(next, level{t: ft, index: append(slices.Clone(lv.index), i)})
						continue
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				f := field{name: name, index: append(slices.Clone(lv.index), i), tagged: name != ""}
				if f.name == "" {
					f.name = sf.Name
				}
				for _, o := range strings.Split(opts, ",") {
					f.omitEmpty = f.omitEmpty || o == "omitempty"
					f.omitZero = f.omitZero || o == "omitzero"
					f.quoted = f.quoted || o == "string" && quotable(sf.Type)
				}
				if d, ok := depthOf[f.name]; ok && d < depth {
					continue // a shallower field of this name wins
				}
				depthOf[f.name] = depth
				all = append(all, f)
			}
		}
		current = next
	}
	// Resolve same-depth duplicates: one tagged field wins, else none.
	var out []field
	for _, f := range all {
		var rivals []field
		for _, g := range all {
			if g.name == f.name && len(g.index) == len(f.index) {
				rivals = append(rivals, g)
			}
		}
		if len(rivals) == 1 {
			out = append(out, f)
			continue
		}
		tagged := 0
		for _, g := range rivals {
			if g.tagged {
				tagged++
			}
		}
		if tagged == 1 && f.tagged {
			out = append(out, f)
		}
	}
	// Declaration order: shallower fields first within each struct is what
	// encoding/json does; sort by index path.
	slices.SortStableFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	fieldCache.Store(t, out)
	return out
}

// quotable reports whether the string option applies to a field of type
// t, as in encoding/json: a bool, number or string, or an unnamed pointer
// to one.
func quotable(t reflect.Type) bool {
	if t.Name() == "" && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// Decode stores v in the Go value dst points to, in the manner of
// encoding/json:
//
//   - into a Value, v as it is (the only target that keeps everything,
//     member order included);
//   - into an `any`: nil for Null, Undefined() and Hole() (as Values) for
//     undefined and holes, bool, string, float64 (NaN, ±Inf and −0 as
//     those float64 values), []any and map[string]any;
//   - into bool, string and numeric types, the matching kind; an integer
//     type takes only an integral Number in its range; []byte takes a
//     base64 String; a json.Number takes a finite Number (as
//     JSON.stringify writes it) or a String of a JSON number;
//   - a struct field with the `json:",string"` option takes a String of
//     its JSON text ("123", "true", "\"abc\""), as encoding/json reads
//     it, or Null;
//   - into slices, arrays, maps with string or integer keys, and structs
//     (members matched to fields by `json` name, exactly, else ignoring
//     case; unknown members ignored), element by element;
//   - Null, Undefined and Hole set pointers, slices, maps and interfaces
//     to nil and leave other targets unchanged;
//   - a type with UnmarshalJSON gets the value's plain JSON (see
//     ToPlainJSON), one with UnmarshalText a String's text.
//
// Errors name the path of the offending part (value[0].city).
func Decode(v Value, dst any) error {
	return decoder{}.root(v, dst, "value")
}

func init() {
	convhook.DecodePath = func(v any, dst any, path string) error {
		return decoder{legacy: true}.root(v.(Value), dst, path)
	}
}

// decoder decodes Values into Go values. legacy puts convhook's Undefined
// and Hole (host.Undefined{} and host.Hole{}) in an `any` instead of
// Undefined() and Hole().
type decoder struct{ legacy bool }

func (d decoder) root(v Value, dst any, path string) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("Decode needs a non-nil pointer")
	}
	return d.into(v, rv.Elem(), path)
}

// DecodeError is a value that does not fit the Go type it is decoded into.
type DecodeError struct {
	Path string // where in the value: value, value[2].name, ...
	Msg  string
}

func (e *DecodeError) Error() string { return e.Path + ": " + e.Msg }

func mismatch(v Value, rv reflect.Value, path string) error {
	return &DecodeError{Path: path, Msg: fmt.Sprintf("cannot decode %s into Go %s", kindName(v), rv.Type())}
}

func kindName(v Value) string {
	switch v.Kind {
	case KindUndefined:
		return "Undefined"
	case KindNull:
		return "Null"
	case KindHole:
		return "Hole"
	case KindBool:
		return "Bool"
	case KindString:
		return "String"
	case KindNumber:
		return "Number " + strconv.FormatFloat(v.Num, 'g', -1, 64)
	case KindArray:
		return "Array"
	case KindObject:
		return "Object"
	}
	return "invalid value"
}

// into decodes v into rv: the types that take any kind first (Value, the
// Go forms of undefined and holes, `any`, pointers, JSON and text
// unmarshalers), then one function per Go kind.
func (d decoder) into(v Value, rv reflect.Value, path string) error {
	t := rv.Type()
	switch t {
	case valueType:
		rv.Set(reflect.ValueOf(v))
		return nil
	case convhook.UndefinedType:
		if v.Kind != KindUndefined {
			return mismatch(v, rv, path)
		}
		return nil
	case convhook.HoleType:
		if v.Kind != KindHole {
			return mismatch(v, rv, path)
		}
		return nil
	}
	if rv.Kind() == reflect.Interface && t.NumMethod() == 0 {
		if v.Kind == KindNull {
			rv.SetZero()
		} else {
			rv.Set(reflect.ValueOf(d.generic(v)))
		}
		return nil
	}
	if v.Kind == KindNull || v.Kind == KindUndefined || v.Kind == KindHole {
		switch rv.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
			rv.SetZero()
		}
		return nil
	}
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			rv.Set(reflect.New(t.Elem()))
		}
		return d.into(v, rv.Elem(), path)
	}
	if done, err := unmarshal(v, rv, path); done {
		return err
	}
	switch rv.Kind() {
	case reflect.Bool:
		return decodeBool(v, rv, path)
	case reflect.String:
		return decodeString(v, rv, path)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decodeInt(v, rv, path)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return decodeUint(v, rv, path)
	case reflect.Float32, reflect.Float64:
		return decodeFloat(v, rv, path)
	case reflect.Slice:
		return d.slice(v, rv, path)
	case reflect.Array:
		return d.array(v, rv, path)
	case reflect.Map:
		return d.mapOf(v, rv, path)
	case reflect.Struct:
		return d.structOf(v, rv, path)
	}
	return mismatch(v, rv, path)
}

// unmarshal decodes v through rv's UnmarshalJSON, or its UnmarshalText
// for a String; done says whether rv has either.
func unmarshal(v Value, rv reflect.Value, path string) (done bool, err error) {
	pt := reflect.PointerTo(rv.Type())
	if pt.Implements(jsonUnmarsh) {
		b, err := ToPlainJSON(v)
		if err != nil {
			return true, &DecodeError{Path: path, Msg: err.Error()}
		}
		if err := rv.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b); err != nil {
			return true, &DecodeError{Path: path, Msg: err.Error()}
		}
		return true, nil
	}
	if pt.Implements(textUnmarsh) && v.Kind == KindString {
		if err := rv.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(v.Str)); err != nil {
			return true, &DecodeError{Path: path, Msg: err.Error()}
		}
		return true, nil
	}
	return false, nil
}

func decodeBool(v Value, rv reflect.Value, path string) error {
	if v.Kind != KindBool {
		return mismatch(v, rv, path)
	}
	rv.SetBool(v.Bool)
	return nil
}

func decodeString(v Value, rv reflect.Value, path string) error {
	if rv.Type() == jsonNumber {
		switch {
		case v.Kind == KindNumber && !math.IsNaN(v.Num) && !math.IsInf(v.Num, 0):
			rv.SetString(string(appendJSNumber(nil, v.Num)))
		case v.Kind == KindString && isJSONNumber(v.Str):
			rv.SetString(v.Str)
		default:
			return mismatch(v, rv, path)
		}
		return nil
	}
	if v.Kind != KindString {
		return mismatch(v, rv, path)
	}
	rv.SetString(v.Str)
	return nil
}

func decodeInt(v Value, rv reflect.Value, path string) error {
	if v.Kind != KindNumber || v.Num != math.Trunc(v.Num) || math.IsInf(v.Num, 0) ||
		v.Num < -(1<<63) || v.Num >= 1<<63 || rv.OverflowInt(int64(v.Num)) {
		return mismatch(v, rv, path)
	}
	rv.SetInt(int64(v.Num))
	return nil
}

func decodeUint(v Value, rv reflect.Value, path string) error {
	if v.Kind != KindNumber || v.Num != math.Trunc(v.Num) || v.Num < 0 || v.Num >= 1<<64 ||
		rv.OverflowUint(uint64(v.Num)) {
		return mismatch(v, rv, path)
	}
	rv.SetUint(uint64(v.Num))
	return nil
}

func decodeFloat(v Value, rv reflect.Value, path string) error {
	if v.Kind != KindNumber || (rv.Kind() == reflect.Float32 && rv.OverflowFloat(v.Num) && !math.IsInf(v.Num, 0)) {
		return mismatch(v, rv, path)
	}
	rv.SetFloat(v.Num)
	return nil
}

func (d decoder) slice(v Value, rv reflect.Value, path string) error {
	t := rv.Type()
	if t.Elem().Kind() == reflect.Uint8 && v.Kind == KindString {
		b, err := base64.StdEncoding.DecodeString(v.Str)
		if err != nil {
			return &DecodeError{Path: path, Msg: "String is not base64 for Go []byte"}
		}
		rv.SetBytes(b)
		return nil
	}
	if v.Kind != KindArray {
		return mismatch(v, rv, path)
	}
	s := reflect.MakeSlice(t, len(v.Elems), len(v.Elems))
	for i, e := range v.Elems {
		if err := d.into(e, s.Index(i), path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	rv.Set(s)
	return nil
}

func (d decoder) array(v Value, rv reflect.Value, path string) error {
	if v.Kind != KindArray {
		return mismatch(v, rv, path)
	}
	rv.SetZero()
	for i, e := range v.Elems {
		if i == rv.Len() {
			break
		}
		if err := d.into(e, rv.Index(i), path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	return nil
}

func (d decoder) mapOf(v Value, rv reflect.Value, path string) error {
	if v.Kind != KindObject {
		return mismatch(v, rv, path)
	}
	t := rv.Type()
	if rv.IsNil() {
		rv.Set(reflect.MakeMapWithSize(t, len(v.Members)))
	}
	for _, m := range v.Members {
		k := reflect.New(t.Key()).Elem()
		if err := setMapKey(k, m.Key); err != nil {
			return &DecodeError{Path: path, Msg: err.Error()}
		}
		e := reflect.New(t.Elem()).Elem()
		if err := d.into(m.Value, e, path+"."+m.Key); err != nil {
			return err
		}
		rv.SetMapIndex(k, e)
	}
	return nil
}

func (d decoder) structOf(v Value, rv reflect.Value, path string) error {
	if v.Kind != KindObject {
		return mismatch(v, rv, path)
	}
	fields := structFields(rv.Type())
	for _, m := range v.Members {
		f := matchField(fields, m.Key)
		if f == nil {
			continue
		}
		fv, err := settableField(rv, f.index)
		if err != nil {
			return &DecodeError{Path: path + "." + m.Key, Msg: err.Error()}
		}
		if f.quoted && m.Value.Kind != KindNull && m.Value.Kind != KindUndefined {
			err = decodeQuoted(m.Value, fv, path+"."+m.Key)
		} else {
			err = d.into(m.Value, fv, path+"."+m.Key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeQuoted decodes a field with the string option: the String holds
// the field's JSON text.
func decodeQuoted(v Value, fv reflect.Value, path string) error {
	if v.Kind != KindString {
		return &DecodeError{Path: path, Msg: "a `json:\",string\"` field takes a String, not " + kindName(v)}
	}
	if err := json.Unmarshal([]byte(v.Str), fv.Addr().Interface()); err != nil {
		return &DecodeError{Path: path, Msg: fmt.Sprintf("String %q is not the JSON text of a Go %s", v.Str, fv.Type())}
	}
	return nil
}

func matchField(fields []field, key string) *field {
	for i := range fields {
		if fields[i].name == key {
			return &fields[i]
		}
	}
	for i := range fields {
		if strings.EqualFold(fields[i].name, key) {
			return &fields[i]
		}
	}
	return nil
}

// settableField follows index, allocating nil embedded pointers.
func settableField(v reflect.Value, index []int) (reflect.Value, error) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, errors.New("cannot set a field of an unexported embedded pointer")
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

func setMapKey(k reflect.Value, s string) error {
	switch k.Kind() {
	case reflect.String:
		k.SetString(s)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || k.OverflowInt(n) {
			return fmt.Errorf("key %q is not a Go %s", s, k.Type())
		}
		k.SetInt(n)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || k.OverflowUint(n) {
			return fmt.Errorf("key %q is not a Go %s", s, k.Type())
		}
		k.SetUint(n)
		return nil
	}
	return fmt.Errorf("cannot decode an Object into a Go map with %s keys", k.Type())
}

// generic is v as the Go values Decode puts in an `any`.
func (d decoder) generic(v Value) any {
	switch v.Kind {
	case KindUndefined:
		if d.legacy {
			return convhook.Undefined
		}
		return v
	case KindHole:
		if d.legacy {
			return convhook.Hole
		}
		return v
	case KindBool:
		return v.Bool
	case KindString:
		return v.Str
	case KindNumber:
		return v.Num
	case KindArray:
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = d.generic(e)
		}
		return out
	case KindObject:
		out := make(map[string]any, len(v.Members))
		for _, m := range v.Members {
			out[m.Key] = d.generic(m.Value)
		}
		return out
	}
	return nil
}

// FromPlainJSON converts ordinary JSON (what JSON.parse reads, not the
// tagged wire form) to a StructuredValue: objects keep their member
// order, numbers become float64 as JSON.parse reads them.
func FromPlainJSON(b []byte) (Value, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := plainValue(d, 0)
	if err != nil {
		return Value{}, fmt.Errorf("plain JSON: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return Value{}, errors.New("plain JSON: data after the value")
	}
	if err := v.Validate(); err != nil {
		return Value{}, err
	}
	return v, nil
}

func plainValue(d *json.Decoder, depth int) (Value, error) {
	tok, err := d.Token()
	if err != nil {
		return Value{}, err
	}
	switch x := tok.(type) {
	case nil:
		return Null(), nil
	case bool:
		return Bool(x), nil
	case string:
		return String(x), nil
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return Value{}, err
		}
		return Number(f), nil // out of range: ±Inf, as JSON.parse
	case json.Delim:
		if depth >= MaxDepth {
			return Value{}, ErrNestingLimit
		}
		if x == '[' {
			var elems []Value
			for d.More() {
				e, err := plainValue(d, depth+1)
				if err != nil {
					return Value{}, err
				}
				elems = append(elems, e)
			}
			_, err := d.Token()
			return Array(elems...), err
		}
		var members []Member
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return Value{}, err
			}
			e, err := plainValue(d, depth+1)
			if err != nil {
				return Value{}, err
			}
			k := kt.(string)
			// A repeated key: the last wins, at the first one's place, as
			// JSON.parse does.
			if i := slices.IndexFunc(members, func(m Member) bool { return m.Key == k }); i >= 0 {
				members[i].Value = e
				continue
			}
			members = append(members, M(k, e))
		}
		_, err := d.Token()
		return Object(members...), err
	}
	return Value{}, fmt.Errorf("unexpected token %v", tok)
}

// ToPlainJSON writes v as ordinary JSON, members in order. Values plain
// JSON cannot hold fail (undefined, holes, NaN and ±Infinity); −0 is
// written as 0, as JSON.stringify does.
func ToPlainJSON(v Value) ([]byte, error) {
	return appendPlain(nil, v)
}

// appendJSNumber writes a finite number as JavaScript's JSON.stringify
// does: the shortest digits that read back as it, in positional notation
// from 1e-6 up to 1e21 (2**52 is 4503599627370496, not
// 4.503599627370496e+15), with an exponent outside; -0 is 0.
func appendJSNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if abs := math.Abs(f); abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	// Go writes e-07 and e+07; JavaScript writes e-7 and e+7.
	e := start + strings.IndexByte(string(dst[start:]), 'e')
	digits := e + 2
	for digits < len(dst)-1 && dst[digits] == '0' {
		dst = append(dst[:digits], dst[digits+1:]...)
	}
	return dst
}

func appendPlain(dst []byte, v Value) ([]byte, error) {
	switch v.Kind {
	case KindNull:
		return append(dst, "null"...), nil
	case KindBool:
		return strconv.AppendBool(dst, v.Bool), nil
	case KindString:
		b, err := json.Marshal(v.Str)
		return append(dst, b...), err
	case KindNumber:
		if math.IsNaN(v.Num) || math.IsInf(v.Num, 0) {
			return nil, fmt.Errorf("%s has no plain JSON form", kindName(v))
		}
		return appendJSNumber(dst, v.Num), nil
	case KindArray:
		dst = append(dst, '[')
		for i, e := range v.Elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendPlain(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case KindObject:
		dst = append(dst, '{')
		for i, m := range v.Members {
			if i > 0 {
				dst = append(dst, ',')
			}
			k, err := json.Marshal(m.Key)
			if err != nil {
				return nil, err
			}
			dst = append(append(dst, k...), ':')
			if dst, err = appendPlain(dst, m.Value); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	return nil, fmt.Errorf("%s has no plain JSON form", kindName(v))
}
