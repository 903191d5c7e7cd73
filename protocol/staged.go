package protocol

import (
	"runtime"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/cache"
	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// Values past 1 MiB (the stage_values extension): a compile's source, a
// start's program bytes and inputs, and a resume's answers may each come
// from a stage instead of the request itself, so that none of them is
// bounded by the request limit. The request names the stage in a field of
// its own beside the inline one:
//
//	compile  source_stage_id           UTF-8 source
//	start    program_stage_id          program bytes
//	         options.inputs_stage_id   a JSON object of StructuredValues
//	resume   payload_stage_id          the JSON of a ResumePayload
//	         answers[i].payload_stage_id
//
// (a resume's snapshot bytes come from stage_id, transfer.go). Every stage
// a request names is taken, and so dropped, when the request is served,
// before anything else about it is checked: whatever the outcome, a retry
// stages its bytes again, and no stage outlives the request that used it.
// Staged bytes are then checked exactly as the inline field would be.

// stagedSet holds the stages a request named, by stage id.
type stagedSet map[string][]byte

// takeNamed takes every stage that f names in one of the keys, leaving
// malformed ids to the step that reads the field.
func (st *stages) takeNamed(set stagedSet, f fields, keys ...string) stagedSet {
	for _, k := range keys {
		id, ok, err := f.stageID(k)
		if err != nil || !ok {
			continue
		}
		if _, done := set[id]; done {
			continue
		}
		if b, ok := st.take(id); ok {
			if set == nil {
				set = stagedSet{}
			}
			if b == nil {
				b = []byte{}
			}
			set[id] = b
		}
	}
	return set
}

// takeAnswerStages takes the stages a batch resume's answers name.
func (st *stages) takeAnswerStages(set stagedSet, f fields) stagedSet {
	jsonscan.Elements(f.at(wire.FieldAnswers), func(raw []byte) bool {
		if a, err := splitObject(raw); err == nil {
			set = st.takeNamed(set, a, wire.FieldPayloadStageID)
		}
		return true
	})
	return set
}

// takeOne removes the stage f[key] names. It returns nil bytes and no
// error when f names none.
func (st *stages) takeOne(f fields, key string) ([]byte, error) {
	id, ok, err := f.stageID(key)
	if err != nil || !ok {
		return nil, err
	}
	b, ok := st.take(id)
	if !ok {
		return nil, errorf(codeUnknownStageID, "unknown stage_id `%s`", id)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// staged returns the bytes of the stage f[key] names; ok is false when f
// has no such key. inline is the field it stands in for: naming both fails.
func (set stagedSet) staged(f fields, key, inline, structure string) ([]byte, bool, error) {
	id, ok, err := f.stageID(key)
	if err != nil || !ok {
		return nil, false, err
	}
	if f.present(inline) {
		return nil, false, errorf(codeValueAndStage, "%s takes %s or %s, not both", structure, inline, key)
	}
	b, ok := set[id]
	if !ok {
		return nil, false, errorf(codeUnknownStageID, "unknown stage_id `%s`", id)
	}
	return b, true, nil
}

// stagedJSON wraps staged bytes that stand for the JSON value of field
// key as a one-field object, after the checks every request header gets:
// UTF-8, and exactly one JSON value.
func stagedJSON(stageKey, key string, b []byte) (fields, error) {
	if !validJSON(b) { // UTF-8 included; the message tells which failed
		if !utf8.Valid(b) {
			return nil, errorf(codeInvalidStaged, "%s: the staged bytes are not valid UTF-8", stageKey)
		}
		return nil, errorf(codeInvalidStaged, "%s: the staged bytes are not valid JSON", stageKey)
	}
	return fields{{key: key, raw: b}}, nil
}

// MaxStages bounds how many stages a session holds at once.
const MaxStages = 1024

// stages holds uploads in progress. Their bytes together are bounded by
// max; what they hold (with the room each has to grow) is reserved in the
// memory budget, which evicts cached entries to make room.
type stages struct {
	max    int64
	total  int64
	m      map[string][]byte
	budget *cache.Budget
	held   int64 // reserved in budget: the stages' capacity
}

func newStages(max int64, budget *cache.Budget) *stages {
	return &stages{max: max, m: make(map[string][]byte), budget: budget}
}

// take removes a stage and returns its bytes: the request that takes
// them owns them now, and drops them once served.
func (st *stages) take(id string) ([]byte, bool) {
	b, ok := st.m[id]
	if ok {
		delete(st.m, id)
		st.total -= int64(len(b))
		st.release(int64(cap(b)))
	}
	return b, ok
}

// release gives back a stage's reservation.
func (st *stages) release(n int64) {
	st.budget.Release(n)
	st.held -= n
}

// add appends chunk at offset. A failed add changes nothing. An owned
// chunk that begins a stage becomes it, with no copy: a snapshot uploaded
// in one chunk is then in memory once.
func (st *stages) add(id string, offset uint64, chunk []byte, owned bool) (int, error) {
	cur, ok := st.m[id]
	switch {
	case offset == 0:
		if !ok && len(st.m) >= MaxStages {
			return 0, errorf(codeTooManyStages, "too many stages (at most %d); resume or restart one", MaxStages)
		}
		cur = nil
	case !ok:
		return 0, errorf(codeUnknownStageID, "unknown stage_id `%s`", id)
	case offset != uint64(len(cur)):
		return 0, errorf(codeStageOffsetMismatch, "stage offset %d does not match staged length %d", offset, len(cur))
	}
	prev := st.m[id]
	old := int64(len(prev))
	if st.total-old+int64(len(cur))+int64(len(chunk)) > st.max {
		return 0, errorf(codeStageTooLarge, "stage exceeds %d bytes", st.max)
	}
	adopt := offset == 0 && owned && len(chunk) > 0 && int64(cap(chunk)) <= st.max
	grown := chunk
	if !adopt {
		if need := len(cur) + len(chunk); need > cap(cur) && need >= collectBeforeGrowth {
			// The copy holds the old bytes and the new at once, on top of
			// whatever garbage the heap has: collect it first, so that the
			// transient is the stage's alone (TestE2EMemorySnapshotsAndStages).
			runtime.GC()
		}
		grown = grow(cur, len(chunk), st.max)
	}
	if more := int64(cap(grown)) - int64(cap(cur)); more > 0 {
		// Bounded by max, at most half the budget: only a compile under
		// way could be in the way, and none is while a stage is served.
		if !st.budget.Reserve(more) {
			return 0, errorf(codeStageTooLarge, "stage exceeds %d bytes", st.max)
		}
		st.held += more
	}
	if offset == 0 && prev != nil {
		st.release(int64(cap(prev))) // restarted: the old bytes are dropped
	}
	if adopt {
		cur = grown
	} else {
		cur = append(grown, chunk...)
	}
	st.m[id] = cur
	st.total += int64(len(cur)) - old
	return len(cur), nil
}

// collectBeforeGrowth is the stage size from which growing it collects
// garbage first: a handful of collections for the largest stage.
const collectBeforeGrowth = 16 << 20

// grow makes room for n more bytes, doubling but never past limit, so an
// upload near the bound does not hold twice the bound.
func grow(b []byte, n int, limit int64) []byte {
	need := len(b) + n
	if need <= cap(b) {
		return b
	}
	c := 2 * cap(b)
	if c < need {
		c = need
	}
	if int64(c) > limit {
		c = int(limit)
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}
