package protocol

import (
	"strconv"

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

// fetchResult is a snapshot fetch result ({"kind":"snapshot"}).
type fetchResult struct {
	snapID string
	offset uint64
	total  int
	bytes  []byte
}

func (ft *fetchResult) encode(id uint64, jsonl bool) Response {
	b := okHeader(id, jsonl, len(ft.bytes))
	b = append(b, resultOf+wire.KindSnapshot+`","`+wire.FieldSnapshotID+`":`...)
	b = appendString(b, ft.snapID)
	b = append(b, `,"`+wire.FieldOffset+`":`...)
	b = strconv.AppendUint(b, ft.offset, 10)
	b = append(b, `,"`+wire.FieldTotalBytes+`":`...)
	b = strconv.AppendInt(b, int64(ft.total), 10)
	b, payload := appendRaw(b, jsonl, wire.FieldSnapshotBase64, ft.bytes)
	return Response{Header: append(b, "}}"...), Payload: payload}
}

// stageResult is a stage result ({"kind":"staged"}).
type stageResult struct {
	stageID string
	total   int
}

func (st *stageResult) encode(id uint64, jsonl bool) Response {
	b := okHeader(id, jsonl, 0)
	b = append(b, resultOf+wire.KindStaged+`","`+wire.FieldStageID+`":`...)
	b = appendString(b, st.stageID)
	b = append(b, `,"`+wire.FieldTotalBytes+`":`...)
	b = strconv.AppendInt(b, int64(st.total), 10)
	return Response{Header: append(b, "}}"...)}
}

// stage serves {"method":"stage","stage_id","offset"} with a chunk.
func (s *Session) stage(r stageRequest) (*stageResult, error) {
	total, err := s.stages.add(r.stageID, r.offset, r.chunk, r.owned)
	if err != nil {
		return nil, err
	}
	return &stageResult{stageID: r.stageID, total: total}, nil
}

// fetchSnapshot serves {"method":"snapshot","snapshot_id","offset","max_bytes"}.
func (s *Session) fetchSnapshot(r fetchRequest) (*fetchResult, error) {
	entry := s.lookupSnapshot(r.snapID)
	if entry == nil {
		return nil, s.evicted.unknownSnapshot(r.snapID)
	}
	total := uint64(len(entry.bytes))
	if r.offset > total {
		return nil, errorf(codeOffsetPastEnd, "offset %d is past the end of snapshot (%d bytes)", r.offset, total)
	}
	end := total
	if total-r.offset > r.maxBytes {
		end = r.offset + r.maxBytes
	}
	return &fetchResult{snapID: r.snapID, offset: r.offset, total: len(entry.bytes), bytes: entry.bytes[r.offset:end]}, nil
}
