package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"

	"github.com/mustard-sidecar/mustard-sidecar/host"

	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Checkpoint is what a Runner stores about an execution: where it is
// suspended, the answers once the host has them, or how it ended.
//
// A one-call execution (host.HostCalls empty or host.HostCallsOne, and every
// checkpoint written before batch mode) is suspended on one call,
// Capability with Args, and has at most one host.Answer. A batch-mode
// execution (host.HostCalls is host.HostCallsBatch) is suspended on every call in
// Outstanding, each with its own answer.
type Checkpoint struct {
	ProgramID string
	// Calls is the number of capability calls answered so far (the
	// answers the sidecar has been given).
	Calls int
	// HostCalls is the mode the execution runs in; it keeps it from its
	// start to its end.
	HostCalls host.HostCalls

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
	Answer *host.Payload
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
	// FailureCode is the failure's error code (host.Error.Code: "runtime",
	// "limit_wall_time", ...). A sealed checkpoint keeps it readable, so
	// that listings tell failed executions from completed ones.
	FailureCode string
	// Sealed, when set, holds Capability, Args, host.Answer, Outstanding,
	// Result and Failure sealed (Runner.SealKey); those fields are then
	// empty in what the Store keeps. A Store keeps it as it keeps the
	// snapshot: bytes, opaque.
	Sealed []byte

	// Cancelled is set, with Done, once Runner.Cancel ended the execution;
	// a later Run returns an error matching ErrCancelled. Failure then
	// says so too, for a Store that does not keep Cancelled.
	Cancelled bool

	// Fence is the fencing token of the lease the Runner saved the
	// checkpoint under (Lease.Token), 0 without one: a LeaseStore refuses
	// a save whose Fence is not the token of the execution's current
	// lease (see LeaseStore). Other Stores may ignore it.
	Fence uint64
	// Updated is when the Runner saved the checkpoint (UTC): the time of
	// the execution's last step, for listings and retention.
	Updated time.Time
}

// StoredCall is an outstanding call of a batch-mode Checkpoint.
type StoredCall struct {
	host.PendingCall
	// Answer is the host's answer, nil until the capability returned.
	Answer *host.Payload
}

// Store keeps checkpoints, one per execution id. A Runner saves one after
// every step and loads it when Run is called for an id it already knows,
// so a store that outlives the host process lets executions survive it.
// A Store may also implement AppendStore (a cheap append path),
// LeaseStore (one Runner per execution across processes) and ListStore
// (listings, status and Prune).
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

// AppendStore is a Store with an append path. A snapshot is an
// append-only journal: each snapshot of an execution is a prefix of the
// next, and a step adds a few bytes plus its answer and its next call,
// whatever the length of the history. When the snapshot of the checkpoint
// a Runner saves extends the one it saved last for that execution, it
// calls Append instead of Save, so that a Store keeping snapshots in files
// or blobs can write only the new bytes and a step costs the same at
// step 10 and at step 10,000. DirStore is one.
type AppendStore interface {
	Store
	// Append is Save for a checkpoint whose snapshot extends the snapshot
	// of the checkpoint stored for id: that one is baseID, its bytes are
	// cp.Snapshot[:baseLen], and the new bytes cp.Snapshot[baseLen:]. It
	// is atomic as Save is. If the Store does not hold baseID for id (a
	// save it lost, another writer), it must save cp whole, as Save does.
	Append(ctx context.Context, id string, cp *Checkpoint, baseID string, baseLen int) error
}

// appendOrSave saves cp to st through its append path if it has one.
func appendOrSave(ctx context.Context, st Store, id string, cp *Checkpoint, baseID string, baseLen int) error {
	if a, ok := st.(AppendStore); ok {
		return a.Append(ctx, id, cp, baseID, baseLen)
	}
	return st.Save(ctx, id, cp)
}

// MemoryStore is a Store in memory: executions survive sidecar crashes,
// not the host process. The zero MemoryStore is ready to use.
//
// MemoryStore is a LeaseStore: Runners sharing one MemoryStore run each
// execution in one of them at a time.
type MemoryStore struct {
	mu     sync.Mutex
	m      map[string]*Checkpoint
	leases map[string]*memLease
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
	if err := s.memFence(id, cp.Fence); err != nil {
		return err
	}
	if s.m == nil {
		s.m = map[string]*Checkpoint{}
	}
	s.m[id] = cp
	return nil
}

func (s *MemoryStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.memFence(id, 0); err != nil {
		return err
	}
	delete(s.m, id)
	delete(s.leases, id)
	return nil
}

// DirStore is a Store in a directory, with an append path (AppendStore):
// execution <id> is the record <id>.json plus a journal file
// <id>.<name>.journal holding its current snapshot. A snapshot is an
// append-only journal (each snapshot of an execution is a prefix of the
// next), so a step that extends it appends only its new bytes to the
// journal file, and the record, which names the journal file, the length
// of the snapshot in it and its id, is written whole: to a temporary
// file, synced, renamed into place, and the directory synced. The record
// is the commit point: bytes past the length it names (a crash during an
// append, or before the record that would name them was written) are
// ignored, and cut off by the next append; a crash leaves the previous
// checkpoint or the new one. A step costs the same at any length of the
// history, and a Load reads and checks the whole snapshot against its id.
//
// A snapshot that does not extend the stored one is written to a new
// journal file, whole and atomically, before the record names it.
// Directories written before the journal (the snapshot in
// <id>.<snapshot_id>.snapshot) still load; the next save moves the
// execution to a journal file. Ids must be 1 to 128 characters of
// [A-Za-z0-9_-].
//
// DirStore is a LeaseStore (see DirStore.Acquire): processes sharing a
// directory run each execution in one of them at a time, and a process
// that died lets go of its executions at once. While a Run holds an
// execution, the directory holds its lease, the small file <id>.lease
// (so that renewing it never rewrites a large record), and the lock files
// <id>.lock and <id>.owner (flock), all removed when the lease is
// released; each record names the fencing token it was written under. The directory must be on a local file system, where flock
// works across processes. DirStore is a ListStore too.
type DirStore struct {
	dir string

	mu     sync.Mutex
	owners map[string]*os.File // the owner files this DirStore holds locked, by id and token
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
// cancelled: they were not cancelled. Records written before the journal
// have no journal: their snapshot is the file <id>.<snapshot_id>.snapshot.
type dirRecord struct {
	ProgramID   string         `json:"program_id"`
	Calls       int            `json:"calls"`
	HostCalls   host.HostCalls `json:"host_calls,omitempty"`
	SnapshotID  string         `json:"snapshot_id,omitempty"`
	Journal     string         `json:"journal,omitempty"`
	JournalLen  int            `json:"journal_len,omitempty"`
	Capability  string         `json:"capability,omitempty"`
	Args        []value.Value  `json:"args,omitempty"`
	Answer      *host.Payload  `json:"answer,omitempty"`
	Outstanding []dirCall      `json:"outstanding,omitempty"`
	Done        bool           `json:"done,omitempty"`
	Result      *value.Value   `json:"result,omitempty"`
	Failure     string         `json:"failure,omitempty"`
	Cancelled   bool           `json:"cancelled,omitempty"`
	Sealed      []byte         `json:"sealed,omitempty"`
	FailureCode string         `json:"failure_code,omitempty"`
	// Fence is the fencing token the record was written under.
	Fence   uint64     `json:"fence,omitempty"`
	Updated *time.Time `json:"updated,omitempty"`
}

type dirCall struct {
	CallID     uint64        `json:"call_id"`
	Capability string        `json:"capability"`
	Args       []value.Value `json:"args"`
	Answer     *host.Payload `json:"answer,omitempty"`
}

// journalName is the <name> of a journal file: 16 random hex digits, so
// that a new journal file never replaces one a record names.
var journalName = regexp.MustCompile(`^[0-9a-f]{16}$`)

func (s *DirStore) checkID(id string) error {
	if !storeID.MatchString(id) {
		return fmt.Errorf("DirStore: execution id %q is not 1 to 128 characters of [A-Za-z0-9_-]", id)
	}
	return nil
}

func (s *DirStore) recordPath(id string) string { return filepath.Join(s.dir, id+".json") }

func (s *DirStore) journalPath(id, name string) string {
	return filepath.Join(s.dir, id+"."+name+".journal")
}

// legacyPath is where records without a journal keep their snapshot.
func (s *DirStore) legacyPath(id, snapshotID string) string {
	return filepath.Join(s.dir, id+"."+snapshotID+".snapshot")
}

// pathless is err without the file's path (the directory is the host's
// business, not the error reader's).
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// readRecord returns the record of id, nil if there is none.
func (s *DirStore) readRecord(id string) (*dirRecord, error) {
	b, err := os.ReadFile(s.recordPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("DirStore: reading the record of %s: %w", id, pathless(err))
	}
	var r dirRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("DirStore: the record of %s is not a checkpoint: %v", id, err)
	}
	if r.Journal != "" && (!journalName.MatchString(r.Journal) || r.JournalLen < 0) {
		return nil, fmt.Errorf("DirStore: the record of %s names no valid journal", id)
	}
	return &r, nil
}

func (s *DirStore) Load(_ context.Context, id string) (*Checkpoint, bool, error) {
	if err := s.checkID(id); err != nil {
		return nil, false, err
	}
	r, err := s.readRecord(id)
	if err != nil || r == nil {
		return nil, false, err
	}
	cp := &Checkpoint{ProgramID: r.ProgramID, Calls: r.Calls, HostCalls: r.HostCalls, SnapshotID: r.SnapshotID,
		Capability: r.Capability, Args: r.Args, Answer: r.Answer, Done: r.Done, Failure: r.Failure, Cancelled: r.Cancelled,
		Sealed: r.Sealed, Fence: r.Fence, FailureCode: r.FailureCode}
	if r.Updated != nil {
		cp.Updated = *r.Updated
	}
	for _, k := range r.Outstanding {
		cp.Outstanding = append(cp.Outstanding, StoredCall{PendingCall: host.PendingCall{ID: k.CallID, Capability: k.Capability,
			Args: k.Args}, Answer: k.Answer})
	}
	if r.Result != nil {
		cp.Result = *r.Result
	}
	if r.SnapshotID != "" {
		if cp.Snapshot, err = s.readSnapshot(id, r); err != nil {
			return nil, false, err
		}
	}
	return cp, true, nil
}

// readSnapshot reads and checks the snapshot a record names.
func (s *DirStore) readSnapshot(id string, r *dirRecord) ([]byte, error) {
	var snap []byte
	var err error
	if r.Journal == "" {
		snap, err = os.ReadFile(s.legacyPath(id, r.SnapshotID))
	} else {
		snap, err = s.readJournal(id, r.Journal, r.JournalLen)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("DirStore: the snapshot file of %s is missing", id)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return nil, fmt.Errorf("DirStore: the snapshot file of %s is truncated: it holds fewer bytes than its record names", id)
	case err != nil:
		return nil, fmt.Errorf("DirStore: reading the snapshot of %s: %w", id, pathless(err))
	}
	if wire.SHA256Hex(snap) != r.SnapshotID {
		return nil, fmt.Errorf("DirStore: the snapshot file of %s is corrupt", id)
	}
	return snap, nil
}

// readJournal returns the first n bytes of a journal file; bytes past
// them are not part of the snapshot.
func (s *DirStore) readJournal(id, name string, n int) ([]byte, error) {
	f, err := os.Open(s.journalPath(id, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	return b, nil
}

// record is the record of cp, its snapshot left to the caller.
func (s *DirStore) record(cp *Checkpoint) *dirRecord {
	r := &dirRecord{ProgramID: cp.ProgramID, Calls: cp.Calls, HostCalls: cp.HostCalls, Capability: cp.Capability,
		Args: cp.Args, Answer: cp.Answer, Done: cp.Done, Failure: cp.Failure, Cancelled: cp.Cancelled, Sealed: cp.Sealed,
		Fence: cp.Fence, FailureCode: cp.FailureCode}
	if !cp.Updated.IsZero() {
		t := cp.Updated.UTC()
		r.Updated = &t
	}
	for _, k := range cp.Outstanding {
		r.Outstanding = append(r.Outstanding, dirCall{CallID: k.ID, Capability: k.Capability, Args: k.Args, Answer: k.Answer})
	}
	if cp.Done && cp.Failure == "" && cp.Sealed == nil {
		v := cp.Result
		r.Result = &v
	}
	return r
}

// Save replaces the checkpoint of id. It honours cp.Fence as LeaseStore
// says, under the execution's lock.
func (s *DirStore) Save(_ context.Context, id string, cp *Checkpoint) error {
	if err := s.checkID(id); err != nil {
		return err
	}
	return s.locked(id, func() error {
		cur, err := s.readRecord(id)
		if err != nil {
			cur = nil // an unreadable record is replaced
		}
		if err := s.fence(id, cp.Fence, cur); err != nil {
			return err
		}
		return s.save(id, cp, cur)
	})
}

// save is Save with the lock held and the fence checked; cur is the
// record it replaces.
func (s *DirStore) save(id string, cp *Checkpoint, cur *dirRecord) error {
	r := s.record(cp)
	if !cp.Done {
		r.SnapshotID = cp.SnapshotID
		if cur != nil && cur.Journal != "" && cur.SnapshotID == cp.SnapshotID && cur.JournalLen == len(cp.Snapshot) {
			// The same snapshot, saved again with an answer: keep it.
			r.Journal, r.JournalLen = cur.Journal, cur.JournalLen
		} else {
			name, err := s.newJournal(id, cp.Snapshot)
			if err != nil {
				return err
			}
			r.Journal, r.JournalLen = name, len(cp.Snapshot)
		}
	}
	if err := s.writeRecord(id, r); err != nil {
		return err
	}
	if cur == nil || cur.Journal != r.Journal {
		// Snapshot files the record no longer names are garbage now.
		return s.removeSnapshots(id, r.Journal)
	}
	return nil
}

// Append is Save for a checkpoint whose snapshot extends the stored one:
// it appends the new bytes to the journal file, then writes the record.
// If the record does not name baseID at baseLen bytes (another writer
// saved since, or the store lost it), it saves cp whole.
func (s *DirStore) Append(ctx context.Context, id string, cp *Checkpoint, baseID string, baseLen int) error {
	if err := s.checkID(id); err != nil {
		return err
	}
	return s.locked(id, func() error {
		cur, err := s.readRecord(id)
		if err != nil {
			cur = nil
		}
		if err := s.fence(id, cp.Fence, cur); err != nil {
			return err
		}
		if cur == nil || cp.Done || cur.Journal == "" || cur.SnapshotID != baseID ||
			cur.JournalLen != baseLen || baseLen > len(cp.Snapshot) {
			return s.save(id, cp, cur)
		}
		switch err := s.appendJournal(id, cur.Journal, baseLen, cp.Snapshot[baseLen:]); {
		case errors.Is(err, errShortJournal):
			return s.save(id, cp, cur)
		case err != nil:
			return err
		}
		r := s.record(cp)
		r.SnapshotID, r.Journal, r.JournalLen = cp.SnapshotID, cur.Journal, len(cp.Snapshot)
		return s.writeRecord(id, r)
	})
}

// errShortJournal: the journal file holds fewer bytes than its record
// names (damaged); the snapshot is then written afresh.
var errShortJournal = errors.New("journal shorter than its record")

// appendJournal writes delta at offset at of a journal file, cutting off
// whatever lies past at (an append torn by a crash, or one whose record
// was never written), and syncs it.
func (s *DirStore) appendJournal(id, name string, at int, delta []byte) (err error) {
	f, err := os.OpenFile(s.journalPath(id, name), os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return errShortJournal
	}
	if err != nil {
		return fmt.Errorf("DirStore: opening the journal of %s: %w", id, pathless(err))
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("DirStore: writing the journal of %s: %w", id, pathless(cerr))
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("DirStore: the journal of %s: %w", id, pathless(err))
	}
	if fi.Size() < int64(at) {
		return errShortJournal
	}
	if fi.Size() > int64(at) {
		if err := f.Truncate(int64(at)); err != nil {
			return fmt.Errorf("DirStore: cutting the journal of %s: %w", id, pathless(err))
		}
	}
	if _, err := f.WriteAt(delta, int64(at)); err != nil {
		return fmt.Errorf("DirStore: writing the journal of %s: %w", id, pathless(err))
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("DirStore: syncing the journal of %s: %w", id, pathless(err))
	}
	return nil
}

// newJournal writes snap to a new journal file of id, atomically, and
// returns its name.
func (s *DirStore) newJournal(id string, snap []byte) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	name := hex.EncodeToString(b[:])
	if err := s.writeAtomic(s.journalPath(id, name), snap); err != nil {
		return "", fmt.Errorf("DirStore: writing the journal of %s: %w", id, pathless(err))
	}
	return name, nil
}

func (s *DirStore) writeRecord(id string, r *dirRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("DirStore: %w", err)
	}
	if err := s.writeAtomic(s.recordPath(id), b); err != nil {
		return fmt.Errorf("DirStore: writing the record of %s: %w", id, pathless(err))
	}
	return nil
}

func (s *DirStore) Delete(_ context.Context, id string) error {
	if err := s.checkID(id); err != nil {
		return err
	}
	return s.locked(id, func() error {
		l, err := s.readLease(id)
		if err == nil && l != nil && leaseActive(l.Released, l.Expires, time.Now()) {
			return busyError(id)
		}
		if err := os.Remove(s.recordPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("DirStore: removing the record of %s: %w", id, pathless(err))
		}
		if err := s.removeSnapshots(id, ""); err != nil {
			return err
		}
		// The lock file goes last, while it is held: whoever waits for it
		// takes the lock again on a new file.
		for _, p := range []string{s.leasePath(id), s.ownerPath(id), s.lockPath(id)} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("DirStore: removing the lock files of %s: %w", id, pathless(err))
			}
		}
		return nil
	})
}

// removeSnapshots removes the journal and snapshot files of id except the
// journal keep. Ids cannot contain '.', so the prefix "<id>." belongs to
// id alone.
func (s *DirStore) removeSnapshots(id, keep string) error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("DirStore: listing the directory: %w", pathless(err))
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, id+".") || name == id+"."+keep+".journal" ||
			!strings.HasSuffix(name, ".snapshot") && !strings.HasSuffix(name, ".journal") {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("DirStore: removing an old snapshot of %s: %w", id, pathless(err))
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
