package protocol

import (
	"strconv"

	"github.com/mustard-sidecar/mustard-sidecar/cache"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// Snapshots larger than a request or response frame travel in pieces: a
// host fetches the bytes of a snapshot the session holds in chunks
// (method "snapshot"), and uploads the bytes of a snapshot to resume in
// chunks (method "stage"), then resumes naming the stage.

// MaxFetchBytes is the most snapshot bytes one fetch returns (and the
// default), in either transport: a binary response stays under 1 MiB. In
// JSONL base64 adds a third; a host that wants lines under 1 MiB there asks
// for at most 737,280 bytes.
const MaxFetchBytes = wire.MaxFetchBytes

// MaxStages bounds how many stages a session holds at once.
const MaxStages = 1024

// fetched is a snapshot fetch result ({"kind":"snapshot"}).
type fetched struct {
	snapID string
	offset uint64
	total  int
	bytes  []byte
}

func (ft *fetched) encode(id uint64, jsonl bool) Response {
	b := okHeader(id, jsonl, len(ft.bytes))
	b = append(b, `,"result":{"kind":"snapshot","snapshot_id":`...)
	b = appendString(b, ft.snapID)
	b = append(b, `,"offset":`...)
	b = strconv.AppendUint(b, ft.offset, 10)
	b = append(b, `,"total_bytes":`...)
	b = strconv.AppendInt(b, int64(ft.total), 10)
	b, payload := appendRaw(b, jsonl, "snapshot_base64", ft.bytes)
	return Response{Header: append(b, "}}"...), Payload: payload}
}

// staged is a stage result ({"kind":"staged"}).
type staged struct {
	stageID string
	total   int
}

func (st *staged) encode(id uint64, jsonl bool) Response {
	b := okHeader(id, jsonl, 0)
	b = append(b, `,"result":{"kind":"staged","stage_id":`...)
	b = appendString(b, st.stageID)
	b = append(b, `,"total_bytes":`...)
	b = strconv.AppendInt(b, int64(st.total), 10)
	return Response{Header: append(b, "}}"...)}
}

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

// add appends chunk at offset. A failed add changes nothing.
func (st *stages) add(id string, offset uint64, chunk []byte) (int, error) {
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
	grown := grow(cur, len(chunk), st.max)
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
	cur = append(grown, chunk...)
	st.m[id] = cur
	st.total += int64(len(cur)) - old
	return len(cur), nil
}

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

// stage serves {"method":"stage","stage_id","offset"} with a chunk.
func (s *Session) stage(f fields, payload []byte) (*staged, error) {
	id, ok, err := f.stageID("stage_id")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(codeMissingField, "stage requires stage_id")
	}
	offset, ok, err := f.uint("offset")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(codeMissingField, "stage requires offset")
	}
	chunk, _, err := s.rawBytes(f, payload, "bytes_base64")
	if err != nil {
		return nil, err
	}
	total, err := s.stages.add(id, offset, chunk)
	if err != nil {
		return nil, err
	}
	return &staged{stageID: id, total: total}, nil
}

// fetchSnapshot serves {"method":"snapshot","snapshot_id","offset","max_bytes"}.
func (s *Session) fetchSnapshot(f fields, payload []byte) (*fetched, error) {
	if s.opts.Transport == Binary && len(payload) > 0 {
		return nil, errorf(codeUnexpectedPayload, "snapshot requests must not include a binary payload")
	}
	id, ok, err := f.string("snapshot_id")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(codeMissingField, "snapshot requires snapshot_id")
	}
	offset, _, err := f.uint("offset")
	if err != nil {
		return nil, err
	}
	limit := uint64(MaxFetchBytes)
	max, ok, err := f.uint("max_bytes")
	if err != nil {
		return nil, err
	}
	if !ok || max > limit {
		max = limit
	}
	entry := s.lookupSnapshot(id)
	if entry == nil {
		return nil, s.unknownSnapshot(id)
	}
	total := uint64(len(entry.bytes))
	if offset > total {
		return nil, errorf(codeOffsetPastEnd, "offset %d is past the end of snapshot (%d bytes)", offset, total)
	}
	end := total
	if total-offset > max {
		end = offset + max
	}
	return &fetched{snapID: id, offset: offset, total: len(entry.bytes), bytes: entry.bytes[offset:end]}, nil
}

// lookupSnapshot returns the snapshot this session holds under id, or nil.
func (s *Session) lookupSnapshot(id string) *snapshotEntry {
	if c, ok := s.conts.Peek(id); ok {
		return c.entry
	}
	if e, ok := s.snapshots.Get(id); ok {
		return e
	}
	return nil
}
