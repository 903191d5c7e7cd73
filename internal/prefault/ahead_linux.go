package prefault

import (
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"
	"sync"
	"unsafe"
)

// heapClasses are the runtime's classes of heap memory: together, the
// bytes of heap it has mapped.
var heapClasses = [...]string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/stacks:bytes",
}

// piece is how much one call populates: the kernel holds the process's
// memory map for the call, and the runtime waits for it to map more heap.
const piece = 512 << 10

var ahead struct {
	mu      sync.Mutex
	samples []metrics.Sample
	mapped  uint64  // the heap's mapped bytes when last looked at
	top     uintptr // the heap's mapping is populated up to here, from init's chunk
	running bool
	wg      sync.WaitGroup // for tests: a populating to end
	looks   int            // for tests: how many times the mapping was looked up
}

// Ahead populates what the heap's mapping has grown by since it last
// looked, on a goroutine of its own, when the runtime has mapped at least
// half a chunk more heap. The command calls it after each response: a
// young sidecar's heap grows a chunk at a time towards the size its work
// settles at, and without it every page of each chunk costs the request
// that first touches it a fault. The check is a read of the runtime's
// metrics (about 0.3 µs); only a growth looks the mapping up
// (/proc/self/maps). Below the populated top nothing is touched: memory
// the runtime has returned to the system stays returned.
//
// It does nothing where init did not populate (Env "0", a kernel without
// the advice).
func Ahead() {
	if early == nil || result.errno != 0 {
		return
	}
	ahead.mu.Lock()
	defer ahead.mu.Unlock()
	if ahead.running {
		return
	}
	first := ahead.samples == nil
	if first {
		ahead.samples = make([]metrics.Sample, len(heapClasses))
		for i, name := range heapClasses {
			ahead.samples[i].Name = name
		}
		ahead.top = result.base + chunk
	}
	metrics.Read(ahead.samples)
	var mapped uint64
	for _, s := range ahead.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			mapped += s.Value.Uint64()
		}
	}
	if first {
		// What start-up mapped is left as it is: an idle sidecar holds
		// no more than it did. The first growth beyond it takes it along.
		ahead.mapped = mapped
		return
	}
	if mapped < ahead.mapped+chunk/2 {
		return
	}
	ahead.mapped = mapped
	ahead.running = true
	ahead.wg.Add(1)
	go populateGrowth(ahead.top)
}

// populateGrowth populates the heap's mapping from top to its end.
func populateGrowth(top uintptr) {
	defer ahead.wg.Done()
	from := top
	if start, end, ok := mappingOf(uintptr(unsafe.Pointer(early))); ok {
		from = max(from, start)
		for from < end {
			n := min(piece, end-from)
			if populate(from, n) != 0 {
				break
			}
			from += n
		}
	}
	ahead.mu.Lock()
	ahead.top = max(ahead.top, from)
	ahead.running = false
	ahead.looks++
	ahead.mu.Unlock()
}

// mappingOf returns the bounds of this process's read-write mapping that
// holds addr. The runtime maps its heap a chunk at a time next to what it
// has mapped, and the kernel keeps adjacent mappings alike as one, so the
// heap object early's mapping is the heap's, as far as it has grown.
func mappingOf(addr uintptr) (start, end uintptr, ok bool) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, 0, false
	}
	for line := range bytes.Lines(maps) {
		// start-end perms offset dev inode path
		dash, sp := bytes.IndexByte(line, '-'), bytes.IndexByte(line, ' ')
		if dash < 0 || sp < dash {
			continue
		}
		s, err1 := strconv.ParseUint(string(line[:dash]), 16, 64)
		e, err2 := strconv.ParseUint(string(line[dash+1:sp]), 16, 64)
		if err1 != nil || err2 != nil || addr < uintptr(s) || addr >= uintptr(e) {
			continue
		}
		return uintptr(s), uintptr(e), bytes.HasPrefix(line[sp+1:], []byte("rw"))
	}
	return 0, 0, false
}
