package durable

import (
	"github.com/mustard-sidecar/mustard-sidecar/host/internal/link"

	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"
)

// State is where an execution stands, as a listing reports it.
type State string

const (
	// StateRunning: a Run holds the execution's lease (it runs now, or
	// its Runner died less than a lease's TTL ago).
	StateRunning State = "running"
	// StateWaiting: suspended on calls, and no Run holds it: a later Run
	// continues it (a Run that ended with its ctx, an error that stopped
	// it, or a host that died).
	StateWaiting State = "waiting"
	// StateDone: completed with a result.
	StateDone State = "done"
	// StateFailed: ended with a guest failure (an uncaught exception, a
	// limit), which a later Run returns again.
	StateFailed State = "failed"
	// StateCancelled: Runner.Cancel ended it.
	StateCancelled State = "cancelled"
)

// Finished reports whether s is an end: done, failed or cancelled.
func (s State) Finished() bool {
	return s == StateDone || s == StateFailed || s == StateCancelled
}

// ExecutionStatus is what a Store knows of an execution, read without
// running it.
type ExecutionStatus struct {
	ID    string
	State State
	// ProgramID is the program it runs; empty for an execution leased
	// before its first checkpoint.
	ProgramID string
	// Calls is the number of capability calls answered so far.
	Calls int
	// Updated is when its last checkpoint was saved (the time of its last
	// step); zero if the Store does not know.
	Updated time.Time
	// FailureCode is the error code of a failed execution ("runtime",
	// "limit_wall_time", ...), empty if unknown.
	FailureCode string
	// Owner and LeaseExpires name the Runner holding a running
	// execution's lease (Runner.Owner) and when it expires unrenewed.
	Owner        string
	LeaseExpires time.Time
}

// ListStore is a Store that lists its executions and reports one's status
// without running it. MemoryStore and DirStore are ListStores.
type ListStore interface {
	Store
	// List returns the executions in one of states (every one if none
	// are given), ordered by ID.
	List(ctx context.Context, states ...State) ([]ExecutionStatus, error)
	// Status returns the status of id; ok is false if the Store does not
	// know it.
	Status(ctx context.Context, id string) (st ExecutionStatus, ok bool, err error)
}

// CheckpointState is the State a checkpoint records: done, failed,
// cancelled or waiting (a Store that knows of a Run holding the
// execution reports it running instead).
func CheckpointState(cp *Checkpoint) State {
	switch {
	case !cp.Done:
		return StateWaiting
	case cp.Cancelled:
		return StateCancelled
	case cp.Failure != "" || cp.FailureCode != "":
		return StateFailed
	}
	return StateDone
}

// statusOf is the status of a checkpoint (nil for one leased before its
// first) with the lease a Store holds for it.
func statusOf(id string, cp *Checkpoint, owner string, token uint64, expires time.Time, released bool, now time.Time) ExecutionStatus {
	st := ExecutionStatus{ID: id}
	if cp != nil {
		st.State, st.ProgramID, st.Calls, st.Updated, st.FailureCode = CheckpointState(cp), cp.ProgramID, cp.Calls, cp.Updated, cp.FailureCode
		if st.State == StateFailed && st.FailureCode == "" {
			st.FailureCode = link.LegacyCode(cp.Failure)
		}
	}
	if token != 0 && leaseActive(released, expires, now) {
		st.State, st.Owner, st.LeaseExpires = StateRunning, owner, expires
	}
	return st
}

func wanted(states []State, s State) bool { return len(states) == 0 || slices.Contains(states, s) }

func (s *MemoryStore) List(_ context.Context, states ...State) ([]ExecutionStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var out []ExecutionStatus
	seen := map[string]bool{}
	add := func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		if st, ok := s.status(id, now); ok && wanted(states, st.State) {
			out = append(out, st)
		}
	}
	for id := range s.m {
		add(id)
	}
	for id := range s.leases {
		add(id)
	}
	slices.SortFunc(out, func(a, b ExecutionStatus) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (s *MemoryStore) Status(_ context.Context, id string) (ExecutionStatus, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.status(id, time.Now())
	return st, ok, nil
}

// status is the status of id; s.mu is held.
func (s *MemoryStore) status(id string, now time.Time) (ExecutionStatus, bool) {
	cp := s.m[id]
	l := s.leases[id]
	var st ExecutionStatus
	if l != nil {
		st = statusOf(id, cp, l.owner, l.token, l.expires, l.released, now)
	} else {
		st = statusOf(id, cp, "", 0, time.Time{}, true, now)
	}
	return st, cp != nil || st.State == StateRunning
}

// List lists the executions in the directory (ListStore). An execution
// whose Run's process died shows as running until its lease expires (or
// another Run takes it over). Records written before this version show
// their file's time as Updated.
func (s *DirStore) List(_ context.Context, states ...State) ([]ExecutionStatus, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("DirStore: listing the directory: %w", pathless(err))
	}
	now := time.Now()
	var out []ExecutionStatus
	seen := map[string]bool{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			id, ok = strings.CutSuffix(e.Name(), ".lease")
		}
		if !ok || !storeID.MatchString(id) || seen[id] {
			continue
		}
		seen[id] = true
		st, ok, err := s.status(id, now)
		if err != nil {
			return nil, err
		}
		if ok && wanted(states, st.State) {
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b ExecutionStatus) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Status reads the status of id from its record (ListStore).
func (s *DirStore) Status(_ context.Context, id string) (ExecutionStatus, bool, error) {
	if err := s.checkID(id); err != nil {
		return ExecutionStatus{}, false, err
	}
	return s.status(id, time.Now())
}

func (s *DirStore) status(id string, now time.Time) (ExecutionStatus, bool, error) {
	r, err := s.readRecord(id)
	if err != nil {
		return ExecutionStatus{}, false, err
	}
	l, err := s.readLease(id)
	if err != nil {
		return ExecutionStatus{}, false, err
	}
	var cp *Checkpoint
	if r != nil {
		cp = &Checkpoint{ProgramID: r.ProgramID, Calls: r.Calls, Done: r.Done, Failure: r.Failure,
			FailureCode: r.FailureCode, Cancelled: r.Cancelled}
		if r.Updated != nil {
			cp.Updated = *r.Updated
		} else if fi, err := os.Stat(s.recordPath(id)); err == nil {
			cp.Updated = fi.ModTime().UTC()
		} else if !errors.Is(err, fs.ErrNotExist) {
			return ExecutionStatus{}, false, fmt.Errorf("DirStore: the record of %s: %w", id, pathless(err))
		}
	}
	var st ExecutionStatus
	if l != nil {
		st = statusOf(id, cp, l.Owner, l.Token, l.Expires, l.Released, now)
	} else {
		st = statusOf(id, cp, "", 0, time.Time{}, true, now)
	}
	return st, cp != nil || st.State == StateRunning, nil
}

// Status returns the status of execution id without running it: from the
// Store's Status if it is a ListStore, else from its checkpoint (then
// running only if this Runner runs it). It returns an error matching
// ErrUnknownExecution for an ID the Store does not know.
func (r *Runner) Status(ctx context.Context, id string) (ExecutionStatus, error) {
	var st ExecutionStatus
	if ls, ok := r.baseStore().(ListStore); ok {
		s, found, err := ls.Status(ctx, id)
		if err != nil {
			return st, err
		}
		if !found {
			return st, fmt.Errorf("execution %q: %w", id, ErrUnknownExecution)
		}
		return s, nil
	}
	cp, found, err := r.baseStore().Load(ctx, id)
	if err != nil {
		return st, err
	}
	if !found {
		return st, fmt.Errorf("execution %q: %w", id, ErrUnknownExecution)
	}
	st = statusOf(id, cp, "", 0, time.Time{}, true, time.Now())
	r.mu.Lock()
	if rs := r.runs[id]; rs != nil && !rs.cancelling {
		st.State, st.Owner = StateRunning, r.owner()
	}
	r.mu.Unlock()
	return st, nil
}

// Retention says how long a Store keeps executions after their last step,
// by state; 0 keeps them for good. Running executions are always kept.
type Retention struct {
	Done, Failed, Cancelled time.Duration
	// Waiting, if set, removes executions suspended and not run for that
	// long: ones their hosts abandoned. A later Run of such an ID starts
	// it afresh.
	Waiting time.Duration
}

// Prune deletes the executions of st that rp does not keep, and returns
// their IDs. An execution whose last step time is unknown is kept. One
// that a Run takes in the meantime is kept (the Store's Delete refuses it
// while its lease is active).
func Prune(ctx context.Context, st ListStore, rp Retention) ([]string, error) {
	all, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var gone []string
	for _, e := range all {
		var keep time.Duration
		switch e.State {
		case StateDone:
			keep = rp.Done
		case StateFailed:
			keep = rp.Failed
		case StateCancelled:
			keep = rp.Cancelled
		case StateWaiting:
			keep = rp.Waiting
		}
		if keep <= 0 || e.Updated.IsZero() || now.Sub(e.Updated) < keep {
			continue
		}
		// Read again: a Run may have taken it since the listing.
		if again, ok, err := st.Status(ctx, e.ID); err != nil || !ok || again.State != e.State || !again.Updated.Equal(e.Updated) {
			if err != nil {
				return gone, err
			}
			continue
		}
		switch err := st.Delete(ctx, e.ID); {
		case errors.Is(err, ErrExecutionBusy):
		case err != nil:
			return gone, err
		default:
			gone = append(gone, e.ID)
		}
	}
	return gone, nil
}
