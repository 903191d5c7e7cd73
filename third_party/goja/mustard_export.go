package goja

// Native reads for a structured export of guest values: the embedder walks
// plain objects and arrays itself, and doing it through
// Object.keys/getOwnPropertyDescriptor calls built a keys array and a
// descriptor object per property (most of an export's time) and, because
// goja fills descriptors by ordinary assignment, let a guest accessor on
// Object.prototype interfere.

// MustardOwnKeys returns o's own enumerable string-keyed property names in
// the order Object.keys gives them. It runs no guest code for an ordinary
// object or array; the caller must exclude proxies, whose traps it would
// run.
func (o *Object) MustardOwnKeys() []Value {
	return o.self.stringKeys(false, nil)
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
