package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Checkpoint is what a Runner stores about an execution: where it is
// suspended, the answers once the host has them, or how it ended.
//
// A one-call execution (HostCalls empty or HostCallsOne, and every
// checkpoint written before batch mode) is suspended on one call,
// Capability with Args, and has at most one Answer. A batch-mode
// execution (HostCalls is HostCallsBatch) is suspended on every call in
// Outstanding, each with its own answer.
type Checkpoint struct {
	ProgramID string
	// Calls is the number of capability calls answered so far (the
	// answers the sidecar has been given).
	Calls int
	// HostCalls is the mode the execution runs in; it keeps it from its
	// start to its end.
	HostCalls HostCalls

	// The suspension, while the execution is not Done.
	SnapshotID string
	Snapshot   []byte
	// Capability and Args are the call the execution is suspended on;
	// in batch mode they repeat Outstanding[0].
	Capability string
	Args       []value.Value
	// Answer is the host's answer to that call in one-call mode, stored
	// before it is sent so that a resume after a crash reuses it instead
	// of calling the capability again. Batch mode does not use it.
	Answer *Payload
	// Outstanding lists, in batch mode, every call the execution is
	// suspended on, in call order, each with the host's answer once the
	// capability returned: stored before it is sent, so that a resume
	// after a crash sends it again rather than calling the capability
	// again.
	Outstanding []StoredCall

	// Done is set once the execution ended: with Result, or with the
	// sidecar's error text in Failure, or cancelled.
	Done    bool
	Result  value.Value
	Failure string
	// Sealed, when set, holds Capability, Args, Answer, Outstanding,
	// Result and Failure sealed (Runner.SealKey); those fields are then
	// empty in what the Store keeps. A Store keeps it as it keeps the
	// snapshot: bytes, opaque.
	Sealed []byte

	// Cancelled is set, with Done, once Runner.Cancel ended the execution;
	// a later Run returns an error matching ErrCancelled. Failure then
	// says so too, for a Store that does not keep Cancelled.
	Cancelled bool
}

// StoredCall is an outstanding call of a batch-mode Checkpoint.
type StoredCall struct {
	PendingCall
	// Answer is the host's answer, nil until the capability returned.
	Answer *Payload
}

// Store keeps checkpoints, one per execution id. A Runner saves one after
// every step and loads it when Run is called for an id it already knows,
// so a store that outlives the host process lets executions survive it.
// The Runner does not modify a Checkpoint after Save or after Load
// returned it. Implementations must be safe for concurrent use with
// distinct ids.
type Store interface {
	// Load returns the checkpoint of id; ok is false if there is none.
	Load(ctx context.Context, id string) (cp *Checkpoint, ok bool, err error)
	// Save replaces the checkpoint of id, atomically: a Load after a
	// crash sees the old checkpoint or the new one, never a mix.
	Save(ctx context.Context, id string, cp *Checkpoint) error
	// Delete removes the checkpoint of id, if any.
	Delete(ctx context.Context, id string) error
}

// MemoryStore is a Store in memory: executions survive sidecar crashes,
// not the host process. The zero MemoryStore is ready to use.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string]*Checkpoint
}

func (s *MemoryStore) Load(_ context.Context, id string) (*Checkpoint, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cp, ok := s.m[id]
	return cp, ok, nil
}

func (s *MemoryStore) Save(_ context.Context, id string, cp *Checkpoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*Checkpoint{}
	}
	s.m[id] = cp
	return nil
}

func (s *MemoryStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}

// DirStore is a Store in a directory: execution <id> is the file <id>.json
// plus its current snapshot in <id>.<snapshot_id>.snapshot (written once
// per snapshot, since a step saves its checkpoint again with each answer).
// Every file is
// written to a temporary file, synced, and renamed into place, and the
// directory is synced, so a crash leaves the previous checkpoint or the
// new one. Ids must be 1 to 128 characters of [A-Za-z0-9_-].
type DirStore struct {
	dir string
}

var storeID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// NewDirStore returns a DirStore in dir, creating it if needed.
func NewDirStore(dir string) (*DirStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &DirStore{dir: dir}, nil
}

// dirRecord is the file <id>.json. Records written before batch mode
// have no host_calls and no outstanding: they are one-call checkpoints,
// which is how they read. Records written before Runner.Cancel have no
// cancelled: they were not cancelled.
type dirRecord struct {
	ProgramID   string        `json:"program_id"`
	Calls       int           `json:"calls"`
	HostCalls   HostCalls     `json:"host_calls,omitempty"`
	SnapshotID  string        `json:"snapshot_id,omitempty"`
	Capability  string        `json:"capability,omitempty"`
	Args        []value.Value `json:"args,omitempty"`
	Answer      *Payload      `json:"answer,omitempty"`
	Outstanding []dirCall     `json:"outstanding,omitempty"`
	Done        bool          `json:"done,omitempty"`
	Result      *value.Value  `json:"result,omitempty"`
	Failure     string        `json:"failure,omitempty"`
	Cancelled   bool          `json:"cancelled,omitempty"`
	Sealed      []byte        `json:"sealed,omitempty"`
}

type dirCall struct {
	CallID     uint64        `json:"call_id"`
	Capability string        `json:"capability"`
	Args       []value.Value `json:"args"`
	Answer     *Payload      `json:"answer,omitempty"`
}

func (s *DirStore) checkID(id string) error {
	if !storeID.MatchString(id) {
		return fmt.Errorf("DirStore: execution id %q is not 1 to 128 characters of [A-Za-z0-9_-]", id)
	}
	return nil
}

func (s *DirStore) snapshotPath(id, snapshotID string) string {
	return filepath.Join(s.dir, id+"."+snapshotID+".snapshot")
}

func (s *DirStore) Load(_ context.Context, id string) (*Checkpoint, bool, error) {
	if err := s.checkID(id); err != nil {
		return nil, false, err
	}
	b, err := os.ReadFile(filepath.Join(s.dir, id+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var r dirRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, false, fmt.Errorf("DirStore: %s.json: %w", id, err)
	}
	cp := &Checkpoint{ProgramID: r.ProgramID, Calls: r.Calls, HostCalls: r.HostCalls, SnapshotID: r.SnapshotID,
		Capability: r.Capability, Args: r.Args, Answer: r.Answer, Done: r.Done, Failure: r.Failure, Cancelled: r.Cancelled,
		Sealed: r.Sealed}
	for _, k := range r.Outstanding {
		cp.Outstanding = append(cp.Outstanding, StoredCall{PendingCall: PendingCall{ID: k.CallID, Capability: k.Capability,
			Args: k.Args}, Answer: k.Answer})
	}
	if r.Result != nil {
		cp.Result = *r.Result
	}
	if r.SnapshotID != "" {
		snap, err := os.ReadFile(s.snapshotPath(id, r.SnapshotID))
		if err != nil {
			return nil, false, fmt.Errorf("DirStore: snapshot of %s: %w", id, err)
		}
		if sha256Hex(snap) != r.SnapshotID {
			return nil, false, fmt.Errorf("DirStore: the snapshot file of %s is corrupt", id)
		}
		cp.Snapshot = snap
	}
	return cp, true, nil
}

func (s *DirStore) Save(_ context.Context, id string, cp *Checkpoint) error {
	if err := s.checkID(id); err != nil {
		return err
	}
	r := dirRecord{ProgramID: cp.ProgramID, Calls: cp.Calls, HostCalls: cp.HostCalls, Capability: cp.Capability,
		Args: cp.Args, Answer: cp.Answer, Done: cp.Done, Failure: cp.Failure, Cancelled: cp.Cancelled, Sealed: cp.Sealed}
	for _, k := range cp.Outstanding {
		r.Outstanding = append(r.Outstanding, dirCall{CallID: k.ID, Capability: k.Capability, Args: k.Args, Answer: k.Answer})
	}
	if cp.Done && cp.Failure == "" && cp.Sealed == nil {
		v := cp.Result
		r.Result = &v
	}
	if !cp.Done {
		r.SnapshotID = cp.SnapshotID
		path := s.snapshotPath(id, cp.SnapshotID)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if err := s.writeAtomic(path, cp.Snapshot); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("DirStore: %w", err)
	}
	if err := s.writeAtomic(filepath.Join(s.dir, id+".json"), b); err != nil {
		return err
	}
	// Snapshots the record no longer names are garbage now.
	return s.removeSnapshots(id, r.SnapshotID)
}

func (s *DirStore) Delete(_ context.Context, id string) error {
	if err := s.checkID(id); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(s.dir, id+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return s.removeSnapshots(id, "")
}

// removeSnapshots removes the snapshot files of id except keep's. Ids
// cannot contain '.', so the prefix "<id>." belongs to id alone.
func (s *DirStore) removeSnapshots(id, keep string) error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, id+".") && strings.HasSuffix(name, ".snapshot") && name != id+"."+keep+".snapshot" {
			if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// writeAtomic writes b to path through a synced temporary file and a
// rename, then syncs the directory so the rename itself is durable.
func (s *DirStore) writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(s.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
