package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host"

	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"fmt"
	"slices"
)

// snapJournal is the snapshot of a parked execution as its Run keeps it:
// its bytes in a buffer grown by appending, and the SHA-256 state of
// those bytes, so that checking a step's delta against the snapshot id
// and adding it cost what the delta costs, not what the history does.
// Every snapshot it hands out is capped at its length, so the buffer's
// spare capacity is its own and appending never changes bytes a
// Checkpoint holds.
type snapJournal struct {
	id    string // SHA-256 of buf, hex; "" when empty
	buf   []byte
	state []byte // the SHA-256 state after buf (encoding.BinaryMarshaler)
}

// reset makes the journal hold snap, of id, hashing it once.
func (j *snapJournal) reset(snap []byte, id string) error {
	h := sha256.New()
	h.Write(snap)
	if got := hex.EncodeToString(h.Sum(nil)); got != id {
		return fmt.Errorf("the base bytes are not snapshot %s", shortID(id))
	}
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return err
	}
	j.id, j.buf, j.state = id, snap[:len(snap):len(snap)], state
	return nil
}

// holds reports whether the journal holds snapshot id of n bytes.
func (j *snapJournal) holds(id string, n int) bool {
	return j.id != "" && j.id == id && len(j.buf) == n
}

// extend returns the full bytes of s, a suspension from a resume of the
// snapshot base (of id baseID), and keeps them.
func (j *snapJournal) extend(s *host.Suspension, base []byte, baseID string) ([]byte, error) {
	if s.BaseID == "" {
		// In full: the client checked the bytes against the id.
		if err := j.reset(s.Snapshot, s.SnapshotID); err != nil {
			return nil, fmt.Errorf("%w: snapshot bytes do not hash to snapshot_id %s", host.ErrProtocol, shortID(s.SnapshotID))
		}
		return j.bytes(), nil
	}
	if s.BaseID != baseID {
		return nil, fmt.Errorf("the base bytes are not snapshot %s", shortID(s.BaseID))
	}
	if !j.holds(baseID, len(base)) {
		if err := j.reset(base, baseID); err != nil {
			return nil, err
		}
	}
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(j.state); err != nil {
		return nil, err
	}
	h.Write(s.Snapshot)
	if hex.EncodeToString(h.Sum(nil)) != s.SnapshotID {
		return nil, fmt.Errorf("%w: snapshot bytes do not hash to snapshot_id %s", host.ErrProtocol, shortID(s.SnapshotID))
	}
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return nil, err
	}
	if cap(j.buf)-len(j.buf) < len(s.Snapshot) {
		// Doubling: append grows a large slice by a quarter, which for
		// a history that grows by a large answer or argument a step
		// copied all of it every few steps.
		j.buf = slices.Grow(j.buf, max(len(s.Snapshot), len(j.buf)))
	}
	j.buf = append(j.buf, s.Snapshot...)
	j.id, j.state = s.SnapshotID, state
	return j.bytes(), nil
}

// bytes returns the snapshot, capped at its length.
func (j *snapJournal) bytes() []byte { return j.buf[:len(j.buf):len(j.buf)] }

// shortID is an ID cut to 16 bytes for error texts.
func shortID(id string) string {
	if len(id) > 16 {
		return id[:16] + "…"
	}
	return id
}
