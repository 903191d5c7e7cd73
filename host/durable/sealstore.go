package durable

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/internal/seal"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Sealed checkpoints: with a Runner.SealKey, the sidecar seals the
// snapshot bytes, and the Runner seals the rest of what it stores for the
// execution (the calls' capabilities and arguments, the answers, the
// result or failure) before the Store sees it, so that nothing of a
// sealed execution is at rest in plaintext. What stays readable is what
// the Runner needs to find its way: the program id, the count of calls,
// the mode, the snapshot id, and whether the execution is done or
// cancelled.
//
// The box is the envelope of sealed snapshots (package internal/seal:
// XChaCha20-Poly1305 with a random nonce), after the bytes
// checkpointSealMagic; its key is derived from the seal key with
// HKDF-SHA256 for this one purpose (the sidecar derives its own keys from
// it for other purposes), its associated data the execution id and the
// step (the count of calls and the snapshot id), so a box moved to another
// execution or step fails to open. Boxes that earlier releases wrote
// (AES-256-GCM with a random 12-byte nonce, under a key derived for
// checkpointSealInfo, and no magic) still open.

// checkpointSealInfo is the HKDF context of the earlier releases'
// checkpoint key, and the start of every box's associated data.
const checkpointSealInfo = "mustard-sidecar host checkpoint v1"

// checkpointSealInfo2 is the HKDF context of the checkpoint key.
const checkpointSealInfo2 = "mustard-sidecar host checkpoint v2 encryption"

// checkpointSealMagic starts a sealed checkpoint in the shared envelope.
// An earlier release's box starts with its random nonce instead, so it
// may start with these bytes too (once in 2^32); Open then falls back to
// the earlier form when the envelope does not open.
const checkpointSealMagic = "msc\x02"

// ErrSealedCheckpoint is matched when a sealed checkpoint cannot be
// opened: no Runner.SealKey, another key, or bytes that were altered.
var ErrSealedCheckpoint = errors.New("sealed checkpoint cannot be opened")

// sealedFields is what a sealed Checkpoint holds in its box.
type sealedFields struct {
	Capability  string        `json:"capability,omitempty"`
	Args        []value.Value `json:"args,omitempty"`
	Answer      *host.Payload `json:"answer,omitempty"`
	Outstanding []dirCall     `json:"outstanding,omitempty"`
	Result      *value.Value  `json:"result,omitempty"`
	Failure     string        `json:"failure,omitempty"`
}

// checkpointSealer seals and opens checkpoints under one seal key.
type checkpointSealer struct {
	box *seal.Box
	v1  cipher.AEAD // opens earlier releases' boxes
}

func newCheckpointSealer(k host.SealKey) (*checkpointSealer, error) {
	kb := k.Bytes()
	box, err := seal.New(kb, checkpointSealInfo2)
	if err != nil {
		return nil, err
	}
	key, err := hkdf.Key(sha256.New, kb, nil, checkpointSealInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	v1, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &checkpointSealer{box: box, v1: v1}, nil
}

// ad binds a box to its execution and step.
func checkpointAD(id string, cp *Checkpoint) []byte {
	b := []byte(checkpointSealInfo)
	b = binary.AppendUvarint(b, uint64(len(id)))
	b = append(b, id...)
	b = binary.AppendUvarint(b, uint64(cp.Calls))
	b = binary.AppendUvarint(b, uint64(len(cp.SnapshotID)))
	return append(b, cp.SnapshotID...)
}

// seal returns a copy of cp whose confidential fields are in Sealed.
func (s *checkpointSealer) seal(id string, cp *Checkpoint) (*Checkpoint, error) {
	f := sealedFields{Capability: cp.Capability, Args: cp.Args, Answer: cp.Answer, Failure: cp.Failure}
	for _, k := range cp.Outstanding {
		f.Outstanding = append(f.Outstanding, dirCall{CallID: k.ID, Capability: k.Capability, Args: k.Args, Answer: k.Answer})
	}
	if cp.Done && cp.Failure == "" {
		v := cp.Result
		f.Result = &v
	}
	plain, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("sealing the checkpoint of %q: %w", id, err)
	}
	buf := make([]byte, 0, len(checkpointSealMagic)+len(plain)+seal.Overhead)
	sealed, err := s.box.Seal(append(buf, checkpointSealMagic...), plain, checkpointAD(id, cp))
	if err != nil {
		return nil, err
	}
	out := &Checkpoint{ProgramID: cp.ProgramID, Calls: cp.Calls, HostCalls: cp.HostCalls, SnapshotID: cp.SnapshotID,
		Snapshot: cp.Snapshot, Done: cp.Done, Cancelled: cp.Cancelled, Fence: cp.Fence, Updated: cp.Updated,
		FailureCode: cp.FailureCode}
	out.Sealed = sealed
	return out, nil
}

// open returns the plaintext checkpoint of a sealed one.
func (s *checkpointSealer) open(id string, cp *Checkpoint) (*Checkpoint, error) {
	plain, err := s.openBox(cp.Sealed, checkpointAD(id, cp))
	if err != nil {
		return nil, fmt.Errorf("execution %q: %w: %v", id, ErrSealedCheckpoint, err)
	}
	var f sealedFields
	if err := json.Unmarshal(plain, &f); err != nil {
		return nil, fmt.Errorf("execution %q: %w: %v", id, ErrSealedCheckpoint, err)
	}
	out := *cp
	out.Sealed = nil
	out.Capability, out.Args, out.Answer, out.Failure = f.Capability, f.Args, f.Answer, f.Failure
	for _, k := range f.Outstanding {
		out.Outstanding = append(out.Outstanding, StoredCall{PendingCall: host.PendingCall{ID: k.CallID, Capability: k.Capability,
			Args: k.Args}, Answer: k.Answer})
	}
	if f.Result != nil {
		out.Result = *f.Result
	}
	return &out, nil
}

// openBox opens a sealed checkpoint's box: the shared envelope after its
// magic, else an earlier release's AES-256-GCM box.
func (s *checkpointSealer) openBox(b, ad []byte) ([]byte, error) {
	if rest, ok := bytes.CutPrefix(b, []byte(checkpointSealMagic)); ok {
		if plain, err := s.box.Open(nil, rest, ad); err == nil {
			return plain, nil
		}
	}
	n := s.v1.NonceSize()
	if len(b) < n+s.v1.Overhead() {
		return nil, errors.New("it is truncated")
	}
	plain, err := s.v1.Open(nil, b[:n], b[n:], ad)
	if err != nil {
		return nil, errors.New("another seal key, or altered bytes")
	}
	return plain, nil
}

// sealingStore is the Store a Runner with a host.SealKey uses: it seals what
// it saves and opens what it loads. Checkpoints stored unsealed (before
// the Runner had a host.SealKey, or by an older version) load as they are.
// Saved again, they are sealed if their snapshot is (an execution started
// sealed by a version that stored the rest in plaintext), and stay
// unsealed otherwise, through the same sealingStore (one Run or Cancel):
// only a Runner without a host.SealKey can continue a plain execution.
type sealingStore struct {
	Store
	s *checkpointSealer

	mu    sync.Mutex
	plain map[string]bool // ids loaded unsealed
}

func (st *sealingStore) Load(ctx context.Context, id string) (*Checkpoint, bool, error) {
	cp, ok, err := st.Store.Load(ctx, id)
	if err != nil || !ok {
		return cp, ok, err
	}
	if cp.Sealed == nil {
		if cp.Snapshot == nil || sealedSnapshot(cp.Snapshot) {
			return cp, ok, err
		}
		st.mu.Lock()
		if st.plain == nil {
			st.plain = map[string]bool{}
		}
		st.plain[id] = true
		st.mu.Unlock()
		return cp, ok, err
	}
	cp, err = st.s.open(id, cp)
	return cp, err == nil, err
}

func (st *sealingStore) Save(ctx context.Context, id string, cp *Checkpoint) error {
	st.mu.Lock()
	plain := st.plain[id]
	st.mu.Unlock()
	if plain {
		return st.Store.Save(ctx, id, cp)
	}
	sealed, err := st.s.seal(id, cp)
	if err != nil {
		return err
	}
	return st.Store.Save(ctx, id, sealed)
}

// Append seals cp as Save does; the snapshot, sealed by the sidecar,
// goes through the Store's append path as it is.
func (st *sealingStore) Append(ctx context.Context, id string, cp *Checkpoint, baseID string, baseLen int) error {
	st.mu.Lock()
	plain := st.plain[id]
	st.mu.Unlock()
	if !plain {
		var err error
		if cp, err = st.s.seal(id, cp); err != nil {
			return err
		}
	}
	return appendOrSave(ctx, st.Store, id, cp, baseID, baseLen)
}

// openingStore is the Store a Runner without a host.SealKey uses: a sealed
// checkpoint fails to load with a clear error instead of running on
// empty fields.
type openingStore struct{ Store }

func (st openingStore) Load(ctx context.Context, id string) (*Checkpoint, bool, error) {
	cp, ok, err := st.Store.Load(ctx, id)
	if err == nil && ok && cp.Sealed != nil {
		return nil, false, fmt.Errorf("execution %q: %w: it was stored sealed, and Runner.SealKey is not set", id, ErrSealedCheckpoint)
	}
	return cp, ok, err
}

func (st openingStore) Append(ctx context.Context, id string, cp *Checkpoint, baseID string, baseLen int) error {
	return appendOrSave(ctx, st.Store, id, cp, baseID, baseLen)
}

// sealers caches the checkpoint sealer of the last seal key a Runner
// used (deriving it costs an HKDF and a key schedule).
type sealers struct {
	mu  sync.Mutex
	key []byte
	s   *checkpointSealer
}

func (c *sealers) get(k host.SealKey) (*checkpointSealer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kb := k.Bytes()
	if c.s != nil && bytes.Equal(c.key, kb) {
		return c.s, nil
	}
	s, err := newCheckpointSealer(k)
	if err != nil {
		return nil, err
	}
	c.key, c.s = kb, s
	return s, nil
}

// sealedSnapshot reports whether snapshot bytes are sealed: they open
// with the CBOR text "mustard-sealed-snapshot" (docs/protocol.md, sealed
// snapshots).
func sealedSnapshot(b []byte) bool {
	return bytes.Contains(b[:min(len(b), 32)], []byte("mustard-sealed-snapshot"))
}

// failingStore fails every call with err.
type failingStore struct{ err error }

func (st failingStore) Load(context.Context, string) (*Checkpoint, bool, error) {
	return nil, false, st.err
}
func (st failingStore) Save(context.Context, string, *Checkpoint) error { return st.err }
func (st failingStore) Delete(context.Context, string) error            { return st.err }
func (st failingStore) Append(context.Context, string, *Checkpoint, string, int) error {
	return st.err
}
