package engine

import (
	"math/bits"
	"strings"
	"sync/atomic"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Checkpoints (snapshot format version 6, docs/heap-image.md): at a
// suspension whose journal has grown large, an execution writes its state
// as a heap image instead of journaling the answers that led to it, and
// the snapshot is the header, that checkpoint and the journal after it. A
// cold resume reads the image into a realm made as the original was
// before guest code ran and replays only what came after. The journal
// stays the way for every suspension the image cannot hold (the engine
// falls back to it at once): a script waiting in a synchronous call it
// made directly, with nothing else outstanding, or an execution at rest
// (its script or entry function returned a promise, its async code waits
// for the last asynchronous calls it made and no others: snapshot format
// version 7), and a heap of the kinds internal/goja's image writes.

// checkpointMin is how much journal a checkpoint must replace to be
// written. A checkpoint's snapshot does not extend the one before it, so
// a host with delta delivery gets it whole (the header again, the
// image), and writing it walks the guest's heap: worth it when it lets
// go of far more than that, such as a large answer.
const checkpointMin = 16 << 10

// checkpointsWritten counts the process's checkpoints, and
// checkpointsTried the suspensions that came to writing an image (the
// tests' sweep).
var checkpointsWritten, checkpointsTried atomic.Int64

// checkpointAlways makes every suspension the image can hold a checkpoint
// (the equality sweep of checkpoint_test.go).
var checkpointAlways = false

// imageable reports whether the execution may write checkpoints: one of
// a program the interpreter meters, journaled under the current
// metering.
func (x *Execution) imageable() bool {
	if j := x.cfg.Journal; j != nil && j.Version != snapshot.Version && !snapshot.HasCheckpoint(j.Version) {
		return false
	}
	return x.cfg.Program.counted()
}

// entryCall reports whether the execution's program evaluates to the
// function the engine calls (read at the start: the execution lets go
// of its header at its first suspension).
func (x *Execution) entryCall() bool {
	h := &x.cfg.Header
	if j := x.cfg.Journal; j != nil {
		h = &j.Header
	}
	return h.Entry == snapshot.EntryCall
}

// checkpoint writes the suspension s as a checkpoint, if it is worth it
// and the image can hold the execution, and reports whether it did. The
// journal then restarts from it.
func (x *Execution) checkpoint(s *Step) bool {
	if x.base == nil || len(x.outstanding) == 0 {
		return false
	}
	if x.outstanding[0].Sync {
		// Waiting in a call of the script's own frames: not in an
		// entry function, which the engine calls from Go.
		if len(x.outstanding) != 1 || x.async != 0 || x.callEntry {
			return false
		}
	} else if !x.atRest() {
		return false
	}
	// What the journal would hold after this suspension, beyond its
	// header: what a checkpoint replaces. Whether to write one is decided
	// from the journal alone (its plain sizes), so that an execution
	// continued from its snapshot decides as the original did and writes
	// the same bytes.
	tail, head := 0, 0
	if b := x.journal; b != nil {
		tail, head = b.Tail(), b.Head()
	}
	replaced := tail
	for i := range x.unrecorded {
		replaced += x.outcomeSize(&x.unrecorded[i].Payload)
	}
	// The doubling is looked for in all the journal grows by at this
	// suspension, the calls made with it too: a guest passing a
	// document from call to call grows its journal by their arguments,
	// which the answers alone never showed it.
	if !checkpointAlways && (replaced < max(checkpointMin, 2*head) || !checkpointDue(tail, replaced+callsSize(s.NewCalls()))) {
		return false
	}
	return x.writeCheckpoint(s, replaced)
}

// writeCheckpoint writes the checkpoint that checkpoint decided is due:
// the image, unless it cannot hold the execution or is not well under
// the journal it would replace (replaced bytes).
func (x *Execution) writeCheckpoint(s *Step, replaced int) bool {
	checkpointsTried.Add(1)
	r := x.realm
	oc := &x.outstanding[0]
	var img []byte
	var err error
	if oc.Sync {
		callee := x.capabilityObject(oc.Capability)
		img, err = r.rt.MustardWriteImage(x.imageBuf[:0], x.cfg.Program.compiled, x.base, callee, x.argc, x.namedObjects())
	} else {
		// The roots: what the outcome settles from, then each call's
		// promise, in the order of the calls (all asynchronous here).
		roots := x.callPromises(append(x.roots[:0], x.settling))
		img, err = r.rt.MustardWriteRestImage(x.imageBuf[:0], x.cfg.Program.compiled, x.base, x.namedObjects(), roots...)
		clear(roots)
		x.roots = roots[:0]
	}
	x.keepScratch(img)
	if err != nil || 2*len(img) > replaced && !checkpointAlways {
		// An image not well under the journal it would replace (a guest
		// that keeps its answers) is not worth a snapshot that does not
		// extend the last.
		return false
	}
	state, err := r.pcg.MarshalBinary()
	if err != nil {
		return false
	}
	l := journaledLimits(s.Limits)
	cp := snapshot.Checkpoint{Carry: x.workCarry, Rand: state, Image: img}
	b := x.journal
	if b == nil {
		b = x.beginJournal()
	}
	// s.Calls are the calls outstanding, in order.
	nb, raw, id, err := b.Checkpoint(s.Calls, s.Meter, &l, &cp)
	if err != nil {
		return false
	}
	// The builder holds its own copy; the image buffer is reused.
	x.journal, s.Snapshot, s.SnapshotID = nb, raw, id
	x.unrecorded = nil
	checkpointsWritten.Add(1)
	return true
}

// atRest reports whether the execution waits at rest where a checkpoint
// can hold it: where finish waits for the outcome to settle, for
// asynchronous calls only, the last ones made (what the checkpoint item
// records).
func (x *Execution) atRest() bool {
	n := len(x.outstanding)
	if x.settling == nil || x.async != uint64(n) || uint64(n) > x.made {
		return false
	}
	first := x.made - uint64(n) + 1
	for i := range x.outstanding {
		if c := &x.outstanding[i]; c.Sync || c.ID != first+uint64(i) {
			return false
		}
	}
	return true
}

// checkpointDue reports whether a journal growing from tail to replaced
// bytes (past its header or checkpoint) is worth a try at a checkpoint:
// when it reaches checkpointMin times a power of two it had not reached.
// A guest whose state the image cannot hold then has its heap walked
// once each time its journal doubles, not at every step.
func checkpointDue(tail, replaced int) bool {
	return bits.Len(uint(replaced/checkpointMin)) > bits.Len(uint(tail/checkpointMin))
}

// callsSize is about what calls add to a journal: their arguments'
// encoding, estimated from the arguments alone, as the decision it serves
// must be.
func callsSize(calls []snapshot.HostCall) int {
	n := 0
	for i := range calls {
		for _, a := range calls[i].Args {
			n += encodedSize(a)
		}
	}
	return n
}

// encodedSize is about the size of v's encoding: a string's or key's
// bytes, and at most nine bytes of head for each value.
func encodedSize(v value.Value) int {
	switch v.Kind {
	case value.KindString:
		return 9 + len(v.Str)
	case value.KindArray:
		n := 9
		for _, el := range v.Elems {
			n += encodedSize(el)
		}
		return n
	case value.KindObject:
		n := 9
		for _, m := range v.Members {
			n += 9 + len(m.Key) + encodedSize(m.Value)
		}
		return n
	}
	return 9
}

// outcomeSize is about what an answer adds to a journal before it is
// compressed: its encoding's size.
func (x *Execution) outcomeSize(p *Payload) int {
	o := &p.Outcome
	if enc, _ := o.Encoded(); enc != nil {
		return len(enc)
	}
	if e := o.Error; e != nil {
		return len(e.Name) + len(e.Message)
	}
	// An answer given as a Value (in process): encoded as the journal
	// would, into the image's buffer, which the image overwrites.
	enc := o.Value.AppendCBOR(x.imageBuf[:0])
	x.keepScratch(enc)
	return len(enc)
}

// keepScratch keeps b's array as the next image's buffer if it is small:
// a parked execution does not hold the largest image it ever wrote.
func (x *Execution) keepScratch(b []byte) {
	if cap(b) <= maxImageScratch {
		x.imageBuf = b
	} else {
		x.imageBuf = nil
	}
}

// maxImageScratch bounds the image buffer an execution keeps.
const maxImageScratch = 4 << 10

// namedObjects are the realm's own objects a guest may hold that an image
// names rather than writes: the namespace objects and the functions they
// hold (capabilities with dotted names, the console's methods), by their
// dotted paths. The capabilities with plain names are globals, which the
// image names by their global names.
func (x *Execution) namedObjects() map[*goja.Object]string {
	var named map[*goja.Object]string
	x.eachNamed(func(path string, o *goja.Object) {
		if named == nil {
			named = map[*goja.Object]string{}
		}
		named[o] = path
	})
	return named
}

// eachNamed calls f with each namespace object and each function a
// namespace holds, and its path.
func (x *Execution) eachNamed(f func(path string, o *goja.Object)) {
	global := x.realm.rt.GlobalObject()
	visit := func(name string) {
		var o *goja.Object = global
		for i := 0; i <= len(name); i++ {
			if i < len(name) && name[i] != '.' {
				continue
			}
			next, ok := o.Get(lastSegment(name[:i])).(*goja.Object)
			if !ok {
				return
			}
			o = next
			f(name[:i], o)
		}
	}
	for _, name := range x.capabilities() {
		if strings.IndexByte(name, '.') >= 0 {
			visit(name)
		}
	}
}

// capabilities are the realm's dotted and plain capability names, the
// console's methods included when it collects.
func (x *Execution) capabilities() []string {
	names := x.caps
	if x.console == policy.ConsoleCollect {
		names = append(names[:len(names):len(names)], consoleNames()...)
	}
	return names
}

// consoleNames are the collecting console's methods as capability names.
func consoleNames() []string {
	names := make([]string, len(policy.ConsoleMethods))
	for i, m := range policy.ConsoleMethods {
		names[i] = "console." + m
	}
	return names
}

// capabilityObject is the function the realm installed for a capability.
func (x *Execution) capabilityObject(name string) *goja.Object {
	if strings.IndexByte(name, '.') >= 0 {
		return x.named(name)
	}
	o, _ := x.realm.rt.GlobalObject().Get(name).(*goja.Object)
	return o
}

// named finds what namedObjects named, in a realm made again.
func (x *Execution) named(path string) *goja.Object {
	var found *goja.Object
	x.eachNamed(func(p string, o *goja.Object) {
		if p == path {
			found = o
		}
	})
	return found
}

// resumeCheckpoint continues the snapshot's checkpoint in the realm, made
// as the original's was before guest code ran, and returns what the
// program completes with, as RunProgram would have. The call the
// checkpoint waits in is made again, to a function that takes its answer
// from the journal after the checkpoint or from the resume.
func (x *Execution) resumeCheckpoint(j *snapshot.Snapshot) (goja.Value, error) {
	if j.Version == snapshot.VersionRestCheckpoint {
		return x.resumeRest(j)
	}
	r := x.realm
	img, err := r.rt.MustardReadImage(x.cfg.Program.compiled, j.Checkpoint.Image, x.named)
	if err != nil {
		return nil, divergence("the checkpoint's image cannot be read")
	}
	if err := r.pcg.UnmarshalBinary(j.Checkpoint.Rand); err != nil {
		return nil, divergence("the checkpoint's random state cannot be read")
	}
	c, err := j.Calls[0].Decoded()
	if err != nil {
		return nil, divergence("the checkpoint's call cannot be read")
	}
	x.made, x.journaled = c.ID, c.ID
	x.outstanding = append(x.outstanding[:0], hostCall{HostCall: c})
	x.meter, x.workCarry = j.Suspensions[0].Meter, j.Checkpoint.Carry
	x.scheduleLook()
	v, err := img.Run(func(goja.FunctionCall) goja.Value { return x.waitSync(c.Capability) })
	if err == goja.ErrImageState { // not errors.Is: an Exception's Unwrap runs guest code
		return nil, errImageDoesNotRun
	}
	return v, err
}

// errImageDoesNotRun ends an execution continued from a checkpoint whose
// state the interpreter cannot run.
var errImageDoesNotRun = divergence("the checkpoint's image does not run")

// resumeRest continues a checkpoint of an execution at rest (snapshot
// format version 7): the image read, the engine waits again for the
// calls' answers to settle their promises, and returns what the outcome
// settles from, for finish to settle as the original was settling it.
func (x *Execution) resumeRest(j *snapshot.Snapshot) (goja.Value, error) {
	r := x.realm
	if j.Checkpoint == nil {
		return nil, divergence("the checkpoint's image cannot be read")
	}
	calls := j.CheckpointCalls()
	img, err := r.rt.MustardReadRestImage(x.cfg.Program.compiled, j.Checkpoint.Image, x.named)
	if err != nil {
		return nil, divergence("the checkpoint's image cannot be read")
	}
	roots := img.Roots()
	if len(roots) != len(calls)+1 || roots[0] == nil {
		return nil, divergence("the checkpoint's image cannot be read")
	}
	if err := r.pcg.UnmarshalBinary(j.Checkpoint.Rand); err != nil {
		return nil, divergence("the checkpoint's random state cannot be read")
	}
	x.outstanding = x.outstanding[:0]
	for i := range calls {
		c, err := calls[i].Decoded()
		p, _ := asPromise(roots[i+1])
		if err != nil || c.Sync || p == nil || p.State() != goja.PromiseStatePending {
			return nil, divergence("the checkpoint's calls cannot be read")
		}
		x.outstanding = append(x.outstanding, hostCall{HostCall: c, promise: p})
	}
	x.restImage = true
	x.made = calls[len(calls)-1].ID
	x.journaled = x.made
	x.async = uint64(len(calls))
	x.meter, x.workCarry = j.Suspensions[0].Meter, j.Checkpoint.Carry
	x.scheduleLook()
	return roots[0], nil
}
