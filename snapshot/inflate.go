package snapshot

import (
	"runtime"
	"sync/atomic"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// A journal's compressed records are decompressed once the journal has
// been read through, not as each is met: decompressing is most of what
// decoding a snapshot with large answers costs (BenchmarkLargeColdResume),
// and once the structure is known to be sound the records can be
// decompressed on every CPU at once. Which error a bad snapshot gets does
// not change: the first one in the bytes, as when records were
// decompressed in order.

// inflateParallelMin is the decompressed size below which a journal's
// records are decompressed on the decoding goroutine alone: under it,
// waking another CPU costs about what it would save.
const inflateParallelMin = 512 << 10

// pendingRecord is a compressed record read but not yet decompressed.
type pendingRecord struct {
	z    []byte
	size uint64
	at   int // the record's offset: where its error points
	// Where its value goes: s.Suspensions[susp].Answers[answer]; susp is
	// -1 until the answer is placed.
	susp, answer int
}

// deferRecord notes a compressed record of the outcome being read.
func (d *decoder) deferRecord(z []byte, size uint64) {
	d.deferred = append(d.deferred, pendingRecord{z: z, size: size, at: d.at, susp: -1})
}

// place notes where the answer just appended to s goes, when its value is
// a record still to be decompressed.
func (d *decoder) place(s *Snapshot) {
	if n := len(d.deferred); n > 0 && d.deferred[n-1].susp < 0 {
		k := len(s.Suspensions) - 1
		d.deferred[n-1].susp, d.deferred[n-1].answer = k, len(s.Suspensions[k].Answers)-1
	}
}

// inflate decompresses the pending records into s after the journal was
// read with result err, and returns the snapshot's first error.
func (d *decoder) inflate(s *Snapshot, err error) error {
	recs := d.deferred
	d.deferred = nil
	if err != nil {
		// The structure failed past every pending record: one of them
		// that fails comes first.
		for i := range recs {
			if _, rerr := recs[i].inflate(true); rerr != nil {
				return rerr
			}
		}
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	var total uint64
	for _, r := range recs {
		total += r.size
	}
	errs := make([]error, len(recs))
	j := &inflateJob{lazy: d.lazy, recs: recs, s: s, errs: errs, done: make(chan struct{}, len(recs))}
	if total >= inflateParallelMin {
		for range min(len(recs), runtime.GOMAXPROCS(0)) - 1 {
			go j.work(true)
		}
	}
	// The caller takes records from the same counter as its helpers and
	// waits only for the ones a helper took: a helper that never got a
	// CPU leaves its share to the caller.
	mine := j.work(false)
	for range len(recs) - mine {
		<-j.done
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

type inflateJob struct {
	lazy bool // records are checked, not decoded (Load)
	recs []pendingRecord
	s    *Snapshot
	errs []error
	next atomic.Int64
	done chan struct{} // a token per record a helper finished
}

// work decompresses records until none is left and returns how many it
// did.
func (j *inflateJob) work(helper bool) int {
	did := 0
	for {
		i := int(j.next.Add(1)) - 1
		if i >= len(j.recs) {
			return did
		}
		r := &j.recs[i]
		if o, err := r.inflate(j.lazy); err != nil {
			j.errs[i] = err
		} else {
			j.s.Suspensions[r.susp].Answers[r.answer].Outcome = o
		}
		did++
		if helper {
			j.done <- struct{}{}
		}
	}
}

// inflate decompresses one record and decodes it, or with lazy only
// checks it (Outcome.Decoded decodes it later).
func (r *pendingRecord) inflate(lazy bool) (Outcome, error) {
	enc, ok := decompress(r.z, r.size)
	if !ok {
		return Outcome{}, &FormatError{Offset: r.at, Err: ErrDecompress}
	}
	// enc is this record's alone: a string that is most of it (an answer
	// of one long text) keeps it instead of a copy of it.
	if lazy {
		if rest, err := value.CheckCBOR(enc); err != nil || len(rest) != 0 {
			return Outcome{}, &FormatError{Offset: r.at, Err: ErrOutcome}
		}
		return Outcome{enc: enc, owned: true}, nil
	}
	v, rest, err := value.DecodeCBOROwned(enc)
	if err != nil || len(rest) != 0 {
		return Outcome{}, &FormatError{Offset: r.at, Err: ErrOutcome}
	}
	return Outcome{Value: v}, nil
}
