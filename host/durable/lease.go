package durable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"
)

var (
	// ErrExecutionBusy is matched by the error of a Run (or Cancel) of an
	// execution that another Run holds: in the same Runner, or, through a
	// LeaseStore, in another Runner or process sharing the Store. With
	// Runner.WaitIfBusy a Run waits instead.
	ErrExecutionBusy = errors.New("execution is busy: another Run holds it")

	// ErrLeaseLost is matched by the error of a Run whose lease on its
	// execution was taken over (it expired, unrenewed, and another Runner
	// took the execution) and by every write it tries afterwards: the
	// Store refuses them, so a Runner that lost its lease cannot change
	// the execution.
	ErrLeaseLost = errors.New("lease on the execution lost")
)

// DefaultLeaseTTL is how long a Runner's lease on an execution lasts
// unless Runner.LeaseTTL says otherwise. The Runner renews it every third
// of that while it runs the execution.
const DefaultLeaseTTL = 15 * time.Second

// Lease is a Runner's ownership of one execution in a LeaseStore.
type Lease struct {
	// Owner names the Runner holding it (Runner.Owner).
	Owner string
	// Token is the fencing token: a new one with every acquisition of
	// the execution's lease, and every checkpoint the holder saves carries it
	// (Checkpoint.Fence), so that the Store can refuse the writes of a
	// holder whose lease was taken over.
	Token uint64
	// Expires is when the lease ends unless renewed.
	Expires time.Time
}

// LeaseStore is a Store that gives each execution one owner at a time. A
// Runner whose Store implements it acquires the execution's lease before
// it loads anything, renews it every third of its TTL while it runs,
// saves every checkpoint with the lease's token in Checkpoint.Fence, and
// releases the lease when Run returns. MemoryStore and DirStore are
// LeaseStores.
//
// The Store's writes honour the fence, atomically with the write itself:
// Save (and Append) of a checkpoint whose Fence is not the token of the
// execution's current lease (or, with none, not the Fence of the
// checkpoint it replaces, if that has one) fails with an error matching
// ErrLeaseLost, and one with Fence 0 fails with one matching
// ErrExecutionBusy while another holder's lease is active. Delete fails with ErrExecutionBusy
// while a lease is active.
type LeaseStore interface {
	Store
	// Acquire takes the lease of id for owner until ttl from now. It
	// fails with an error matching ErrExecutionBusy while another
	// holder's lease is active: not released, not expired, and (for
	// stores that can tell, such as DirStore) its holder still alive.
	// Each acquisition's token differs from every earlier one's for id
	// (it grows, from the clock's nanoseconds), and is never 0.
	Acquire(ctx context.Context, id, owner string, ttl time.Duration) (Lease, error)
	// Renew extends l until ttl from now; it fails with an error matching
	// ErrLeaseLost if l is no longer the lease of id.
	Renew(ctx context.Context, id string, l Lease, ttl time.Duration) (Lease, error)
	// Release ends l, so that the next Acquire need not wait for it to
	// expire. Releasing a lease that was taken over does nothing.
	Release(ctx context.Context, id string, l Lease) error
}

// leaseActive reports whether a lease blocks others at now.
func leaseActive(released bool, expires, now time.Time) bool {
	return !released && now.Before(expires)
}

// nextToken is a fencing token greater than prev: the clock's
// nanoseconds if they are, so that tokens keep growing after the record
// holding the last one was deleted.
func nextToken(prev uint64) uint64 {
	t := uint64(time.Now().UnixNano())
	if t <= prev {
		return prev + 1
	}
	return t
}

func busyError(id string) error {
	return &refusal{fmt.Sprintf("execution %q is already running", id), ErrExecutionBusy, nil}
}

func lostError(id string) error {
	return &refusal{fmt.Sprintf("execution %q: its lease was taken over by another Runner", id), ErrLeaseLost, nil}
}

// owner is the name the Runner holds leases under: Runner.Owner, or one
// made up once of the host name, the process id and random digits.
func (r *Runner) owner() string {
	r.ownerOnce.Do(func() {
		if r.Owner != "" {
			r.ownerName = r.Owner
			return
		}
		host, _ := os.Hostname()
		var b [4]byte
		rand.Read(b[:])
		r.ownerName = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	})
	return r.ownerName
}

func (r *Runner) leaseTTL() time.Duration {
	if r.LeaseTTL > 0 {
		return r.LeaseTTL
	}
	return DefaultLeaseTTL
}

// baseStore is the Store the Runner was given, or its own MemoryStore.
func (r *Runner) baseStore() Store {
	if r.Store != nil {
		return r.Store
	}
	return &r.mem
}

// heldLease is a lease a Run or Cancel holds, with its renewal.
type heldLease struct {
	st    LeaseStore
	id    string
	lease Lease
	stop  chan struct{}
	done  chan struct{}
}

// acquire takes the lease of id if the Store leases, waiting while it is
// busy if wait is set (polling, ever less often, up to a quarter of the
// TTL). It returns nil for a Store without leases.
func (r *Runner) acquire(ctx context.Context, id string, wait bool) (*heldLease, error) {
	st, ok := r.baseStore().(LeaseStore)
	if !ok {
		return nil, nil
	}
	ttl := r.leaseTTL()
	delay := 5 * time.Millisecond
	for {
		l, err := st.Acquire(ctx, id, r.owner(), ttl)
		if err == nil {
			return &heldLease{st: st, id: id, lease: l}, nil
		}
		if !wait || !errors.Is(err, ErrExecutionBusy) {
			return nil, err
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		delay = min(delay*2, max(ttl/4, 5*time.Millisecond), time.Second)
	}
}

// renew keeps h renewed until stop is called, every third of the TTL;
// if the lease is lost, or cannot be renewed before it expires, it calls
// lost with an error matching ErrLeaseLost.
func (r *Runner) renew(h *heldLease, lost func(error)) {
	h.stop, h.done = make(chan struct{}), make(chan struct{})
	ttl := r.leaseTTL()
	go func() {
		defer close(h.done)
		t := time.NewTicker(max(ttl/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), ttl/3+time.Second)
			l, err := h.st.Renew(ctx, h.id, h.lease, ttl)
			cancel()
			switch {
			case err == nil:
				h.lease = l
			case errors.Is(err, ErrLeaseLost) || !time.Now().Before(h.lease.Expires):
				r.logger().Warn("lease on the execution lost; stopping its Run", "execution", h.id, "error", err.Error())
				lost(lostError(h.id))
				return
			default:
				r.logger().Warn("renewing the lease on the execution failed; trying again", "execution", h.id,
					"error", err.Error())
			}
		}
	}()
}

// release stops the renewal of h, if any, and releases it.
func (h *heldLease) release(ctx context.Context) {
	if h == nil {
		return
	}
	if h.stop != nil {
		close(h.stop)
		<-h.done
	}
	_ = h.st.Release(context.WithoutCancel(ctx), h.id, h.lease)
}

// fence is the token the checkpoints saved under h carry (0 without one).
func (h *heldLease) fence() uint64 {
	if h == nil {
		return 0
	}
	return h.lease.Token
}

// stampStore sets the fencing token and the save time on every
// checkpoint the Runner saves.
type stampStore struct {
	Store
	fence uint64
}

func (st stampStore) stamp(cp *Checkpoint) *Checkpoint {
	c := *cp
	c.Fence = st.fence
	c.Updated = time.Now().UTC()
	return &c
}

func (st stampStore) Save(ctx context.Context, id string, cp *Checkpoint) error {
	return st.Store.Save(ctx, id, st.stamp(cp))
}

func (st stampStore) Append(ctx context.Context, id string, cp *Checkpoint, baseID string, baseLen int) error {
	return appendOrSave(ctx, st.Store, id, st.stamp(cp), baseID, baseLen)
}

// memLease is a MemoryStore's lease of one execution.
type memLease struct {
	owner    string
	token    uint64
	expires  time.Time
	released bool
}

func (s *MemoryStore) Acquire(_ context.Context, id, owner string, ttl time.Duration) (Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	cur := s.leases[id]
	if cur != nil && leaseActive(cur.released, cur.expires, now) {
		return Lease{}, busyError(id)
	}
	var prev uint64
	if cur != nil {
		prev = cur.token
	}
	if cp := s.m[id]; cp != nil {
		prev = max(prev, cp.Fence)
	}
	l := &memLease{owner: owner, token: nextToken(prev), expires: now.Add(ttl)}
	if s.leases == nil {
		s.leases = map[string]*memLease{}
	}
	s.leases[id] = l
	return Lease{Owner: owner, Token: l.token, Expires: l.expires}, nil
}

func (s *MemoryStore) Renew(_ context.Context, id string, l Lease, ttl time.Duration) (Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.leases[id]
	if cur == nil || cur.token != l.Token || cur.released {
		return Lease{}, lostError(id)
	}
	cur.expires = time.Now().Add(ttl)
	l.Expires = cur.expires
	return l, nil
}

func (s *MemoryStore) Release(_ context.Context, id string, l Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.leases[id]; cur != nil && cur.token == l.Token {
		cur.released = true
	}
	return nil
}

// fenceCheck is the check of a LeaseStore's write of a checkpoint fenced
// with fence, given the execution's lease (token 0 if it has none).
func fenceCheck(id string, fence, token uint64, active bool) error {
	switch {
	case fence != 0 && fence != token:
		return lostError(id)
	case fence == 0 && active:
		return busyError(id)
	}
	return nil
}

// memFence checks a write to id; s.mu is held. Without a lease (one
// removed with its execution), a fenced write must carry the token of the
// checkpoint it replaces, as in DirStore.
func (s *MemoryStore) memFence(id string, fence uint64) error {
	cur := s.leases[id]
	if cur == nil {
		if cp := s.m[id]; fence != 0 && cp != nil && cp.Fence != 0 && cp.Fence != fence {
			return lostError(id)
		}
		return nil
	}
	return fenceCheck(id, fence, cur.token, leaseActive(cur.released, cur.expires, time.Now()))
}
