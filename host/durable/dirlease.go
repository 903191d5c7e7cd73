package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// DirStore leases. Each execution's lease (owner, token, expiry) is the
// small file <id>.lease, written atomically while the lease is held and
// removed when it is released, and each record names the token it was
// written under. Two lock files go with it: <id>.lock, held
// (flock) for the moment of each read-check-write, so that the fence
// check and the write it guards are one step for every process sharing
// the directory; and <id>.owner, held by the DirStore whose Runner holds
// the lease, for as long as it holds it.
//
// The owner file makes a dead holder's lease free at once: the kernel
// drops a process's flocks when it ends, however it ends, so an Acquire
// that can lock the owner file knows the holder is gone (or released)
// and takes over without waiting for the lease to expire. A holder that
// is alive but hung keeps its owner file locked; its lease then ends
// when it expires unrenewed, and the fencing token keeps it from writing
// if it wakes up.

// dirLease is the file <id>.lease.
type dirLease struct {
	Owner    string    `json:"owner"`
	Token    uint64    `json:"token"`
	Expires  time.Time `json:"expires"`
	Released bool      `json:"released,omitempty"`
	// Locked is set if the holder holds the owner file locked (it took
	// the lease with the owner file free): only then does a free owner
	// file mean the holder is gone.
	Locked bool `json:"locked,omitempty"`
}

func (s *DirStore) lockPath(id string) string  { return filepath.Join(s.dir, id+".lock") }
func (s *DirStore) leasePath(id string) string { return filepath.Join(s.dir, id+".lease") }

// readLease returns the lease of id, nil if it has none.
func (s *DirStore) readLease(id string) (*dirLease, error) {
	b, err := os.ReadFile(s.leasePath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("DirStore: reading the lease of %s: %w", id, pathless(err))
	}
	var l dirLease
	if err := json.Unmarshal(b, &l); err != nil {
		// Only a crash of the machine leaves one (leases are not synced),
		// and it ended every holder: no lease.
		return nil, nil
	}
	return &l, nil
}

func (s *DirStore) writeLease(id string, l *dirLease) error {
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("DirStore: %w", err)
	}
	// Atomic (a rename) but not synced: a lease matters only while its
	// holder's process lives, and a crash of the machine ends them all.
	f, err := os.CreateTemp(s.dir, ".tmp-*")
	if err == nil {
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), s.leasePath(id))
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}
	if err != nil {
		return fmt.Errorf("DirStore: writing the lease of %s: %w", id, pathless(err))
	}
	return nil
}
func (s *DirStore) ownerPath(id string) string { return filepath.Join(s.dir, id+".owner") }

// locked runs fn with the lock of id held.
func (s *DirStore) locked(id string, fn func() error) error {
	f, _, err := lockFile(s.lockPath(id), true)
	if err != nil {
		return fmt.Errorf("DirStore: locking %s: %w", id, pathless(err))
	}
	defer f.Close() // releases the lock
	return fn()
}

// fence checks a write to id fenced with fence, cur being its record
// (nil if none or unreadable); the lock is held. Without a lease (none
// was taken, or it was released), a fenced write must carry the token of
// the record it replaces, so that a holder whose lease was taken over
// and then released cannot write either.
func (s *DirStore) fence(id string, fence uint64, cur *dirRecord) error {
	l, err := s.readLease(id)
	if err != nil {
		return err
	}
	if l == nil {
		if fence != 0 && cur != nil && cur.Fence != 0 && cur.Fence != fence {
			return lostError(id)
		}
		return nil
	}
	return fenceCheck(id, fence, l.Token, leaseActive(l.Released, l.Expires, time.Now()))
}

// Acquire takes the lease of id (LeaseStore). A lease another holder has
// not released is busy until it expires, unless its holder's process has
// ended: then it is taken over at once.
func (s *DirStore) Acquire(_ context.Context, id, owner string, ttl time.Duration) (Lease, error) {
	if err := s.checkID(id); err != nil {
		return Lease{}, err
	}
	var out Lease
	err := s.locked(id, func() error {
		cur, err := s.readLease(id)
		if err != nil {
			return err
		}
		// Only under the lock is the owner file tried, so that no other
		// Acquire holds it for a moment and looks like a live holder.
		own, free, err := lockFile(s.ownerPath(id), false)
		if err != nil {
			return fmt.Errorf("DirStore: locking the owner file of %s: %w", id, pathless(err))
		}
		now := time.Now()
		var prev uint64
		if cur != nil {
			if leaseActive(cur.Released, cur.Expires, now) && !(free && cur.Locked) {
				if own != nil {
					own.Close()
				}
				return busyError(id)
			}
			prev = cur.Token
		}
		l := &dirLease{Owner: owner, Token: nextToken(prev), Expires: now.Add(ttl), Locked: free}
		if err := s.writeLease(id, l); err != nil {
			if own != nil {
				own.Close()
			}
			return err
		}
		if own != nil {
			s.mu.Lock()
			if s.owners == nil {
				s.owners = map[string]*os.File{}
			}
			s.owners[ownerKey(id, l.Token)] = own
			s.mu.Unlock()
		}
		out = Lease{Owner: owner, Token: l.Token, Expires: l.Expires}
		return nil
	})
	return out, err
}

func ownerKey(id string, token uint64) string { return fmt.Sprintf("%s/%d", id, token) }

// Renew extends l (LeaseStore).
func (s *DirStore) Renew(_ context.Context, id string, l Lease, ttl time.Duration) (Lease, error) {
	if err := s.checkID(id); err != nil {
		return Lease{}, err
	}
	err := s.locked(id, func() error {
		cur, err := s.readLease(id)
		if err != nil {
			return err
		}
		if cur == nil || cur.Token != l.Token || cur.Released {
			return lostError(id)
		}
		cur.Expires = time.Now().Add(ttl)
		l.Expires = cur.Expires
		return s.writeLease(id, cur)
	})
	return l, err
}

// Release ends l (LeaseStore): it unlocks the owner file and, if l is
// still the execution's lease, removes it and the lock files.
func (s *DirStore) Release(_ context.Context, id string, l Lease) error {
	if err := s.checkID(id); err != nil {
		return err
	}
	s.mu.Lock()
	own := s.owners[ownerKey(id, l.Token)]
	delete(s.owners, ownerKey(id, l.Token))
	s.mu.Unlock()
	f, _, err := lockFile(s.lockPath(id), true)
	if err != nil {
		if own != nil {
			own.Close()
		}
		return fmt.Errorf("DirStore: locking %s: %w", id, pathless(err))
	}
	defer f.Close()
	cur, err := s.readLease(id)
	mine := err == nil && cur != nil && cur.Token == l.Token
	if own != nil {
		if mine {
			// No Acquire looks at the owner file while the lock is held,
			// so it can go: the next holder makes a new one.
			os.Remove(s.ownerPath(id))
		}
		own.Close()
	}
	if !mine {
		return err
	}
	// A released lease is no lease: the file goes. (The next token is the
	// clock's, which differs from every token before it.)
	if err := os.Remove(s.leasePath(id)); err != nil {
		return fmt.Errorf("DirStore: removing the lease of %s: %w", id, pathless(err))
	}
	// The lock file goes too, while it is held: whoever waits for it
	// takes the lock again on a new file.
	os.Remove(s.lockPath(id))
	return nil
}
