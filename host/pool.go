package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os/exec"
	"sync"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/host/internal/link"
)

// PoolConfig configures a Pool.
type PoolConfig struct {
	// Size is the number of sidecar processes; 0 means 1.
	Size int
	// Command returns a new unstarted sidecar command each time the pool
	// starts a process; nil means DefaultCommand.
	Command func() *exec.Cmd
	// Client configures each process's client; its Cmd is ignored.
	Client Config
	// Backoff spaces out the respawns of a slot whose processes die
	// young (a bad binary, a crash loop); the zero value is the
	// defaults.
	Backoff Backoff
	// Logger receives the life of the pool's processes, in structured
	// records with a "place" attribute (the slot, from 0): each start
	// (Info, with its "pid" and "restarts"), each exit (Info when the
	// pool closed it, Warn otherwise, with the "status" and what the
	// sidecar said last on stderr), each respawn after an exit (Info,
	// with the backoff "wait"), and failed starts (Error). A durable.Runner on
	// the pool logs there too unless it has a Logger of its own. nil
	// means nothing is logged.
	Logger *slog.Logger
}

// Backoff is a capped exponential backoff with jitter between respawns
// of one slot of a Pool, against crash loops (a bad binary or arguments,
// a sidecar that dies on start). A slot whose process failed to start,
// or died without ever answering a request and within Reset of its
// start, waits before starting the next one: Min the first time, then
// twice as long each time, up to Max, each wait chosen at random between
// half of that and all of it. A process that answered a request, or
// lived Reset or longer, starts the count afresh: processes killed from
// outside while they serve (the OOM killer, an operator) are replaced at
// once. The first start of each slot never waits.
type Backoff struct {
	Min   time.Duration // 0 means 10ms; negative disables the backoff
	Max   time.Duration // 0 means 5s
	Reset time.Duration // 0 means 30s
}

func (b Backoff) withDefaults() Backoff {
	if b.Min == 0 {
		b.Min = 10 * time.Millisecond
	}
	if b.Max == 0 {
		b.Max = 5 * time.Second
	}
	if b.Reset == 0 {
		b.Reset = 30 * time.Second
	}
	return b
}

// wait is the wait before a respawn after failures young deaths in a
// row (failures >= 1).
func (b Backoff) wait(failures int) time.Duration {
	d := b.Min
	for i := 1; i < failures && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	return d/2 + rand.N(d/2+1)
}

// Pool runs executions on a fixed number of sidecar processes, each
// serving one request at a time. A process that dies is replaced by a new
// one the next time its place is needed, after a wait if that place's
// processes keep dying young (PoolConfig.Backoff). A Pool is safe for concurrent
// use; durable.Runner uses it to run executions in parallel.
type Pool struct {
	cfg PoolConfig

	mu      sync.Mutex
	slots   []*slot
	changed chan struct{} // closed and replaced whenever a slot frees or a process ends
	closed  bool
	watch   sync.WaitGroup // one goroutine per process, until it ends

	// started, if set, is told about every process the pool starts (tests).
	started func(*Client)
	// now and sleep are the clock of the backoff (replaced in tests).
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	done  chan struct{} // closed by Close
}

// slot is one place for a process in the pool.
type slot struct {
	place  int // its index
	busy   bool
	client *Client // nil before the first start
	gen    uint64  // counts the processes this slot has had

	startedAt time.Time // when the current process started
	failures  int       // young deaths (or failed starts) in a row
	tried     bool      // a start was attempted
}

// NewPool starts cfg.Size sidecar processes.
func NewPool(cfg PoolConfig) (*Pool, error) {
	if cfg.Size <= 0 {
		cfg.Size = 1
	}
	if cfg.Command == nil {
		cfg.Command = DefaultCommand
	}
	cfg.Backoff = cfg.Backoff.withDefaults()
	if cfg.Logger == nil {
		cfg.Logger = discardLogger
	}
	p := &Pool{cfg: cfg, changed: make(chan struct{}), now: time.Now, sleep: sleepCtx, done: make(chan struct{})}
	for i := range cfg.Size {
		p.slots = append(p.slots, &slot{place: i})
	}
	for _, s := range p.slots {
		if err := p.restart(context.Background(), s); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// lease is a slot lent to one caller, with the process it had then.
type lease struct {
	s   *slot
	c   *Client
	gen uint64
}

// acquire lends a slot with a running process. With a home lease (the
// slot holding a parked execution) it waits for that slot while the
// process that parked it still runs; otherwise, or once that process has
// died, any free slot will do.
func (p *Pool) acquire(ctx context.Context, home *lease) (lease, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return lease{}, ErrClosed
		}
		var pick *slot
		if home != nil && p.alive(home.s, home.gen) {
			if !home.s.busy {
				pick = home.s
			}
		} else {
			for _, s := range p.slots {
				if !s.busy && (pick == nil || (!p.alive(pick, pick.gen) && p.alive(s, s.gen))) {
					pick = s
				}
			}
		}
		if pick != nil {
			pick.busy = true
			c, gen := pick.client, pick.gen
			p.mu.Unlock()
			if !p.alive(pick, gen) {
				if err := p.restart(ctx, pick); err != nil {
					p.release(lease{s: pick})
					return lease{}, err
				}
				p.mu.Lock()
				c, gen = pick.client, pick.gen
				p.mu.Unlock()
			}
			return lease{s: pick, c: c, gen: gen}, nil
		}
		wait := p.changed
		p.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return lease{}, ctx.Err()
		}
	}
}

// alive reports whether s still runs process number gen.
func (p *Pool) alive(s *slot, gen uint64) bool {
	return s.client != nil && s.gen == gen && s.client.running()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// restart replaces the process of a slot the caller holds busy, after
// the backoff's wait if the slot's processes die young.
func (p *Pool) restart(ctx context.Context, s *slot) error {
	p.mu.Lock()
	old := s.client
	p.mu.Unlock()
	if old != nil {
		old.Kill()
		old.Close() // reaps it and ends its goroutines
	}
	if s.tried {
		if old != nil && (old.answered.Load() || p.now().Sub(s.startedAt) >= p.cfg.Backoff.Reset) {
			s.failures = 0
		} else {
			s.failures++
		}
		var wait time.Duration
		if s.failures > 0 && p.cfg.Backoff.Min > 0 {
			wait = p.cfg.Backoff.wait(s.failures)
		}
		prev := 0
		if old != nil {
			prev = old.Pid()
		}
		p.cfg.Logger.Info("respawning sidecar process", "place", s.place, "previous_pid", prev, "failures", s.failures,
			"wait", wait)
		if wait > 0 {
			// The wait ends early with ctx, or when the pool closes.
			wctx, cancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-p.done:
					cancel()
				case <-wctx.Done():
				}
			}()
			err := p.sleep(wctx, wait)
			cancel()
			if err != nil {
				if p.isClosed() {
					return ErrClosed
				}
				return err
			}
		}
	}
	s.tried = true
	cfg := p.cfg.Client
	cfg.Cmd = p.cfg.Command()
	s.startedAt = p.now()
	c, err := NewClient(cfg)
	if err != nil {
		p.cfg.Logger.Error("sidecar process failed to start", "place", s.place, "error", err.Error())
		return err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		return ErrClosed
	}
	s.client = c
	s.gen++
	p.watch.Add(1) // under p.mu: Close waits only after closed is set
	p.mu.Unlock()
	pid, restarts := c.Pid(), s.gen-1
	p.cfg.Logger.Info("sidecar process started", "place", s.place, "pid", pid, "restarts", restarts)
	if p.started != nil {
		p.started(c)
	}
	// Wake waiters for this slot when the process ends. The goroutine
	// ends with the process, which Close ends.
	go func() {
		defer p.watch.Done()
		<-c.Done()
		p.logExit(s.place, pid, c)
		p.mu.Lock()
		p.notify()
		p.mu.Unlock()
	}()
	return nil
}

// logExit logs the end of a process.
func (p *Pool) logExit(place, pid int, c *Client) {
	status := "unknown"
	if ps := c.cmd.ProcessState; ps != nil {
		status = ps.String()
	}
	if err := c.Err(); err != nil {
		p.cfg.Logger.Warn("sidecar process exited", "place", place, "pid", pid, "status", status, "error", err.Error())
		return
	}
	p.cfg.Logger.Info("sidecar process exited", "place", place, "pid", pid, "status", status)
}

func (p *Pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *Pool) release(l lease) {
	p.mu.Lock()
	l.s.busy = false
	p.notify()
	p.mu.Unlock()
}

// notify wakes every waiter; p.mu must be held.
func (p *Pool) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Compile compiles source on one of the pool's processes. Programs are
// deterministic, so the result starts on any of them.
func (p *Pool) Compile(ctx context.Context, source string) (Program, error) {
	return p.CompileWith(ctx, source, CompileOptions{})
}

// CompileWith is Compile with options (see Client.CompileWith).
func (p *Pool) CompileWith(ctx context.Context, source string, opts CompileOptions) (Program, error) {
	var err error
	for range maxAttempts {
		var l lease
		if l, err = p.acquire(ctx, nil); err != nil {
			return Program{}, err
		}
		var prog Program
		prog, err = l.c.CompileWith(ctx, source, opts)
		p.release(l)
		if !errors.Is(err, ErrProcessExited) || ctx.Err() != nil {
			return prog, err
		}
	}
	return Program{}, err
}

// maxAttempts bounds how often one step is retried on a fresh process:
// enough to ride out processes killed from outside at a high rate, few
// enough that a step which kills its process every time fails in seconds.
const maxAttempts = link.MaxAttempts

// Close closes every process gracefully (see Client.Close) and waits for
// them. Calls in progress fail with ErrClosed or ErrProcessExited.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	p.notify()
	var clients []*Client
	for _, s := range p.slots {
		if s.client != nil {
			clients = append(clients, s.client)
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, c := range clients {
		if err := c.Close(); err != nil && !errors.Is(err, ErrProcessExited) {
			errs = append(errs, err)
		}
	}
	p.watch.Wait()
	return errors.Join(errs...)
}

// Process describes one place of a Pool, for operators: the sidecar
// process it runs, if any.
type Process struct {
	PID       int       // 0 when no process runs in this place
	StartedAt time.Time // when that process started
	Busy      bool      // serving a request for a caller now
	Restarts  int       // processes started in this place before the current one
}

// Processes reports each place of the pool, in order. A place whose
// process died, or that has not started one yet, has PID 0; the next
// caller that needs it starts one.
func (p *Pool) Processes() []Process {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Process, len(p.slots))
	for i, s := range p.slots {
		out[i] = Process{Busy: s.busy}
		if s.gen > 0 {
			out[i].Restarts = int(s.gen - 1)
		}
		if p.alive(s, s.gen) {
			out[i].PID, out[i].StartedAt = s.client.Pid(), s.startedAt
		}
	}
	return out
}

// Stats asks each place's process what it holds and how its resumes ran
// (Client.Stats), in place order, waiting for each to finish the request
// it serves. A place with no running process answers nil and starts
// none; so does one whose process fails the request, whose error is
// returned, joined with the others', beside the rest.
func (p *Pool) Stats(ctx context.Context) ([]*Stats, error) {
	out := make([]*Stats, len(p.slots))
	var errs []error
	for i, s := range p.slots {
		c, err := p.hold(ctx, s)
		if err != nil {
			return nil, err
		}
		if c != nil {
			if out[i], err = c.Stats(ctx); err != nil {
				errs = append(errs, fmt.Errorf("place %d: %w", i, err))
			}
		}
		p.release(lease{s: s})
	}
	return out, errors.Join(errs...)
}

// hold marks slot s busy once it is free, and returns its client, nil
// when no process runs there.
func (p *Pool) hold(ctx context.Context, s *slot) (*Client, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		if !s.busy {
			s.busy = true
			var c *Client
			if p.alive(s, s.gen) {
				c = s.client
			}
			p.mu.Unlock()
			return c, nil
		}
		wait := p.changed
		p.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// discardLogger is the logger of a Pool given none.
var discardLogger = slog.New(slog.DiscardHandler)
