package goja

// Native reads for a structured export of guest values: the embedder walks
// plain objects and arrays itself, and doing it through
// Object.keys/getOwnPropertyDescriptor calls built a keys array and a
// descriptor object per property (most of an export's time) and, because
// goja fills descriptors by ordinary assignment, let a guest accessor on
// Object.prototype interfere.

import (
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
)

// MustardOwnKeys returns o's own enumerable string-keyed property names in
// the order Object.keys gives them, and meters exactly what Object.keys
// does (a Meter's counts, and so snapshots recorded by embedders that used
// Object.keys, stay the same). It runs no guest code for an ordinary object
// or array; the caller must exclude proxies, whose traps it would run. The
// error is the interrupt a meter raised, as Object.keys called through
// AssertFunction would return it.
func (o *Object) MustardOwnKeys() (keys []Value, err error) {
	r := o.runtime
	err = r.runWrapped(func() {
		keys = o.self.stringKeys(false, nil)
		r.keysRest(selfKeys(o), len(keys))
	})
	return keys, err
}

// MustardOwnData reads o's own property key without running any getter or
// consulting any prototype (the caller excludes proxies): present is false
// when o has no such own property, accessor true when it is an accessor
// property (v is then nil).
func (o *Object) MustardOwnData(key Value) (v Value, present, accessor bool) {
	p := o.getOwnProp(key)
	if p == nil {
		return nil, false, false
	}
	if vp, ok := p.(*valueProperty); ok {
		if vp.accessor {
			return nil, true, true
		}
		return vp.value, true, false
	}
	return p, true, false
}

// MustardPutData gives o, an ordinary object the embedder has just created
// with NewObject and not yet handed to guest code, an own writable,
// enumerable, configurable data property: what DefineDataProperty does on
// such an object, without building a descriptor and a panic guard per
// property (half the time of importing a host value). A repeated name
// replaces the value and keeps its first place, as a redefinition does.
func (o *Object) MustardPutData(name string, v Value) { o.putData(unistring.NewFromString(name), v) }

func (o *Object) putData(name unistring.String, v Value) {
	if bo, ok := o.self.(*baseObject); ok && bo.extensible {
		bo._putProp(name, v, true, true, true)
		return
	}
	o.self.defineOwnPropertyStr(name, PropertyDescriptor{
		Value:        v,
		Writable:     FLAG_TRUE,
		Configurable: FLAG_TRUE,
		Enumerable:   FLAG_TRUE,
	}, false)
}

// MustardNewObject is NewObject with room for n own properties, for an
// embedder about to give it that many with MustardPutData: the property
// map and the key order are allocated once instead of grown.
func (r *Runtime) MustardNewObject(n int) *Object {
	v := &Object{runtime: r}
	o := &baseObject{class: classObject, val: v, extensible: true, prototype: r.global.ObjectPrototype}
	v.self = o
	o.init() // as NewObject's
	o.values.sized(n)
	if n > 0 {
		o.propNames = make([]unistring.String, 0, n)
	}
	return v
}

// MustardString is ToValue(s) for a Go string without boxing s into an
// interface first (an allocation per string an embedder imports).
func (r *Runtime) MustardString(s string) Value {
	if v, ok := r.MustardStringUTF8(s); ok {
		return v
	}
	return newStringValue(s) // as ToValue makes it
}

// MustardStringUTF8 is MustardString for a string that may not be valid
// UTF-8: false, and no value, when it is not. A long string all ASCII is
// imported already scanned: the one look that checks it is the one the
// guest's first use of it would make (a tool's answer is usually ASCII,
// and usually read). It stays an importedString, which a heap image
// writes once however often the guest holds it.
func (r *Runtime) MustardStringUTF8(s string) (Value, bool) {
	k := unistring.ASCIIPrefix(s)
	if k == len(s) {
		if len(s) <= 16 {
			return asciiString(s), true
		}
		return &importedString{s: s, scanned: true}, true
	}
	// One pass checks the rest and counts its units: the guest's length
	// of it needs no other (importedString.Length).
	n, valid := unistring.UTF16LenValid(s[k:])
	if !valid {
		return nil, false
	}
	if len(s) <= 16 {
		return &importedString{s: s, u: unistring.Scan(s), scanned: true}, true
	}
	return &importedString{s: s, units: 1 + k + n}, true
}

// MustardPreventExtensions makes an object the embedder built
// non-extensible, as Object.preventExtensions does, without a call into
// guest-visible built-ins (which the guest could have replaced).
func (o *Object) MustardPreventExtensions() {
	o.self.preventExtensions(false)
}

// MustardPutDataKey is MustardPutData for a key a Go string cannot hold
// (a string with an unpaired surrogate).
func (o *Object) MustardPutDataKey(key String, v Value) { o.putData(key.string(), v) }

// MustardUTF8 returns the text of s as the Go string an export makes of
// it, when s holds it already: an ASCII string, or an imported one whose
// text is well-formed UTF-8 (which its UTF-16 units, written back as
// UTF-8, give again). An answer the guest passes on to its next call then
// crosses back without becoming UTF-16 and back. False for any other.
func MustardUTF8(s String) (string, bool) {
	switch s := s.(type) {
	case asciiString:
		return string(s), true
	case *importedString:
		if s.scanned && s.u == nil || utf8.ValidString(s.s) {
			return s.s, true
		}
	}
	return "", false
}

// MustardUTF16 returns the UTF-16 units of s without a copy, for reading
// only, when s holds them as such; nil for any other string.
func MustardUTF16(s String) []uint16 {
	if u, ok := s.(unicodeString); ok {
		return u[1:]
	}
	return nil
}
