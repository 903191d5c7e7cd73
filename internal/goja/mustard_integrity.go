package goja

// integrityMeter charges Object.isFrozen and Object.isSealed (a
// mustard-sidecar addition; see PATCHES.md). Each visits every own
// property of a non-extensible object: for an array element it makes the
// element's name and reads its attributes, which costs about as much as
// Object.freeze's work on it (0.7 µs an element of a frozen 100,000-element
// array, measured), far more than the keys meter's visit rate of a unit.
// In programs metered with MustardMeterOperands a property visited costs
// descBytes units of work, as freeze's; others keep the visit rate their
// journals recorded.
type integrityMeter struct {
	keysMeter
	extra int // units per property past the visit rate
	n     int // properties whose extra is not yet reported
}

func (r *Runtime) newIntegrityMeter(o *Object) integrityMeter {
	m := integrityMeter{keysMeter: r.newKeysMeter(o, 0)}
	if r.meter != nil && r.bigMetered {
		m.extra = descBytes - 1
	}
	return m
}

// next is called before each property is visited.
func (m *integrityMeter) next() {
	m.keysMeter.next()
	if m.extra == 0 {
		return
	}
	if m.n++; m.n == workEvery {
		m.n = 0
		m.r.work(workEvery * m.extra)
	}
}

// done is called after the loop, however it ends.
func (m *integrityMeter) done() {
	m.keysMeter.done()
	if m.extra != 0 && m.n > 0 {
		m.r.work(m.n * m.extra)
		m.n = 0
	}
}
