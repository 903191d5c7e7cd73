package goja

// Prototype links and proxy levels (a mustard-sidecar addition; see
// PATCHES.md). A property read on an object at the end of a 30,000-link
// prototype chain, `in` on it, instanceof against it, or an operation
// through 10,000 nested proxies is one instruction that walks them all. With
// MustardMeterOperands on, each link or proxy level walked is charged
// hopUnits of work, reported once every workEvery links so that the common
// single hop costs an increment.

// hopUnits is a quarter of an instruction: a link costs the engine about a
// map lookup and a call.
const hopUnits = 16

// protoHop counts one prototype link or proxy level walked.
func (r *Runtime) protoHop() {
	r.hops++
	if r.hops&(workEvery-1) == 0 && r.bigMetered && r.meter != nil {
		r.work(workEvery * hopUnits)
	}
}

func (o *baseObject) hop() { o.val.runtime.protoHop() }
