package goja

import "sync/atomic"

// Meter is told of the work and the memory built-ins spend inside the engine,
// where no guest code runs and nothing else could see them (a mustard-sidecar
// addition; see PATCHES.md). A Meter that wants the execution to stop calls
// Runtime.Interrupt; the built-in then ends at once with the interrupt, as the
// interpreter would at its next instruction, instead of finishing its loop.
//
// Calls happen on the goroutine running the script, before the work or the
// allocation they report: a built-in about to build a 1 GB string reports
// Alloc(1<<30) first, so the Meter can refuse it before any memory is taken.
type Meter interface {
	// Work reports units of a built-in's own work: about one unit per
	// element, character or byte it visits.
	Work(units int)
	// Alloc reports about bytes of memory the engine is about to allocate
	// in bulk: string contents, buffers (their filling is reported as Work).
	Alloc(bytes int)
	// Make reports about bytes of memory the engine is about to allocate
	// for values (array slots, objects, properties, the strings of a
	// split). Making a value per element costs far more than visiting one,
	// so a Meter should count this as work as well as memory, about one
	// unit a byte.
	Make(bytes int)
}

// SetMeter installs m (nil: none, the default).
func (r *Runtime) SetMeter(m Meter) { r.meter = m }

// work reports n units of work and stops the call if the Meter interrupted.
func (r *Runtime) work(n int) {
	if m := r.meter; m != nil && n > 0 {
		m.Work(n)
		r.vm.checkInterrupt()
	}
}

// alloc reports n bytes about to be allocated for values (array slots,
// objects, properties, the strings of a split): see Meter.Make.
func (r *Runtime) alloc(n int) {
	if m := r.meter; m != nil && n > 0 {
		m.Make(n)
		r.vm.checkInterrupt()
	}
}

// allocBytes reports n bytes about to be allocated in bulk (string
// contents, buffers): the site reports the work of filling them itself.
func (r *Runtime) allocBytes(n int) {
	if m := r.meter; m != nil && n > 0 {
		m.Alloc(n)
		r.vm.checkInterrupt()
	}
}

// metered reports whether a Meter is installed, for loops that report work
// as they go.
func (r *Runtime) metered() bool { return r.meter != nil }

// workEvery is how many loop iterations a built-in runs between reports,
// so a Meter sees long loops (and an Interrupt from another goroutine
// takes effect) without a call per element.
const workEvery = 1024

// tick counts one iteration of a long native loop: every workEvery
// iterations it reports them as work, which also lets an Interrupt stop
// the loop.
func (r *Runtime) tick(i int) {
	if i&(workEvery-1) == workEvery-1 {
		if r.meter != nil {
			r.work(workEvery)
		} else {
			r.vm.checkInterrupt()
		}
	}
}

// checkInterrupt ends the running built-in with a pending interrupt, as the
// interpreter loop does between instructions.
func (vm *vm) checkInterrupt() {
	if atomic.LoadUint32(&vm.interrupted) == 0 {
		return
	}
	vm.interruptLock.Lock()
	v := &InterruptedError{iface: vm.interruptVal}
	v.stack = vm.captureStack(nil, 0)
	vm.interruptLock.Unlock()
	panic(v)
}

// stringBytes is the memory a string of this shape takes: one byte per
// character for ASCII, two per UTF-16 unit otherwise.
func stringBytes(s String) int {
	if _, ascii := s.(asciiString); ascii {
		return s.Length()
	}
	return 2 * s.Length()
}

// What guest values cost, for Alloc reports: a Value slot (an interface)
// and an object property (its map entry and name).
const (
	valueBytes    = 16
	propertyBytes = 64
)

// copyBytesPerUnit: comparing or hashing memory is much cheaper per byte
// than visiting an element (about 0.1 ns a byte), so n bytes compared or
// hashed are n/128 units.
const copyBytesPerUnit = 128

// copying reports a copy into a new allocation of n bytes (a string
// concatenation): the memory, and the work of the copy (copyUnits).
func (r *Runtime) copying(n int) {
	if r.meter != nil && n > 0 {
		r.meter.Alloc(n)
		r.meter.Work(r.copyUnits(n))
		r.vm.checkInterrupt()
	}
}

// copyUnits is the work of copying n bytes into a new allocation. A long
// copy costs its allocation and collection too, so from compareChargeMin
// bytes on it is charged at produceBytesPerUnit; a short one is mostly the
// allocation's fixed cost, which the instruction or call making it pays,
// and keeps the comparison rate. Programs metered without
// MustardMeterOperands (format version 1 or 2) keep the comparison rate
// for all copies, as they were charged when their journals were written.
func (r *Runtime) copyUnits(n int) int {
	if n < compareChargeMin || !r.bigMetered {
		return n / copyBytesPerUnit
	}
	return n / produceBytesPerUnit
}

// made reports a string of n bytes made by the engine itself (an error's
// message, its stack or text, a symbol's text), after it is made: its
// memory, and three copies' work, as such a text is formatted, scanned and
// copied again on its way to the guest (about 2.5 ns a byte, measured for
// messages holding a 1 MB key). Told without an interrupt check, since
// errors are also made where no guest code runs; an interrupt takes effect
// at the next instruction.
func (r *Runtime) made(n int) {
	if r.bigMetered && r.meter != nil && n >= compareChargeMin {
		r.meter.Alloc(n)
		r.meter.Work(3 * r.copyUnits(n))
	}
}

// allocSlots is called before a value slot is appended to a slice holding n:
// each time the slice passes a multiple of workEvery slots, the next
// workEvery slots are reported at once.
func (r *Runtime) allocSlots(n int) {
	if n&(workEvery-1) == 0 {
		r.alloc(workEvery * valueBytes)
	}
}

// concatBytes is the size of a + b.
func concatBytes(a, b String) int {
	_, asciiA := a.(asciiString)
	_, asciiB := b.(asciiString)
	if asciiA && asciiB {
		return a.Length() + b.Length()
	}
	return 2 * (a.Length() + b.Length())
}

// IsASCII reports whether s is stored as ASCII, one byte per character: an
// embedder copying it out knows its size without converting it first.
func IsASCII(s String) bool {
	_, ascii := s.(asciiString)
	return ascii
}
