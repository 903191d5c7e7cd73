package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultBinary is the program DefaultCommand runs, looked up on PATH.
// Install it with
//
//	go install github.com/mustard-sidecar/mustard-sidecar/cmd/mustard-sidecar@latest
const DefaultBinary = "mustard-sidecar"

// DefaultCommand returns an unstarted command running DefaultBinary from
// PATH with no arguments (the binary transport).
func DefaultCommand() *exec.Cmd { return exec.Command(DefaultBinary) }

// Defaults of Config.
const (
	// DefaultMaxResponseBytes bounds one response: the sidecar's default
	// stage bound (64 MiB, the largest snapshot it produces) plus 1 MiB
	// for the header, so any snapshot a default sidecar makes fits in
	// one full delivery.
	DefaultMaxResponseBytes = 65 << 20
	// DefaultCloseGrace is how long Close waits for the process to exit
	// after closing its stdin before it kills it.
	DefaultCloseGrace = 5 * time.Second
	// DefaultCancelGrace is how long a start or resume whose context is
	// done waits for the sidecar to answer after the cancel request
	// before the client kills the process. The contract promises an
	// answer within 50 ms; the grace covers a busy machine and sidecars
	// without the cancel extension.
	DefaultCancelGrace = 2 * time.Second
)

// Config configures a Client. The zero Config runs DefaultCommand.
type Config struct {
	// Cmd is the sidecar command, unstarted, with its path, arguments
	// and environment; nil means DefaultCommand(). Its Stdin and Stdout
	// must be nil (the client owns them). If Stderr is nil the client
	// keeps the tail of the sidecar's stderr for its error messages
	// (and discards the rest); otherwise it goes there too.
	Cmd *exec.Cmd
	// JSONL selects the JSONL transport: the client adds --jsonl to the
	// command's arguments (a command that already has --jsonl selects it
	// too). The default is binary frames.
	JSONL bool
	// MaxResponseBytes bounds the size of one response (a binary frame;
	// in JSONL, where raw bytes travel as base64, a line may be a third
	// longer) and of a snapshot fetched in chunks. A larger one is a
	// protocol error: the client kills the process rather than allocate
	// it. 0 means DefaultMaxResponseBytes. A sidecar run with a
	// --max-stage-bytes above 64 MiB needs a matching bound, or
	// DeliverDelta.
	MaxResponseBytes int
	// CloseGrace and CancelGrace override DefaultCloseGrace and
	// DefaultCancelGrace.
	CloseGrace  time.Duration
	CancelGrace time.Duration
}

// Client is one sidecar process. Its methods may be called from several
// goroutines at once: requests are written in the order the calls are
// made, and the sidecar answers them one at a time in that order, so a
// call waits behind every call made before it (for parallel executions
// use a Pool). Each call takes a context; see Start and Resume for what
// cancelling one does.
type Client struct {
	cmd         *exec.Cmd
	stdin       io.WriteCloser
	jsonl       bool
	cancelGrace time.Duration
	closeGrace  time.Duration
	stderr      *tailWriter
	maxResponse int

	nextID atomic.Uint64
	// answered is set once the process has answered a request: it came
	// up and speaks the protocol (the Pool's backoff).
	answered atomic.Bool
	stages   stageIDs
	uploads  atomic.Uint64 // stages uploaded (tests)

	mu       sync.Mutex
	outbox   []*call // waiting to be written, in order
	inflight []*call // written, waiting for their response, in order
	closing  bool    // Close was called: stdin closes once the outbox is empty
	ended    bool    // stdout ended: the process is gone or going
	dead     error   // why the process is gone; set once it is reaped
	known    map[string]bool

	wake      chan struct{} // nudges the writer
	done      chan struct{} // closed once the process is reaped and every call answered
	closeOnce sync.Once
	closeErr  error
	wg        sync.WaitGroup
}

// call is one request on its way through the client.
type call struct {
	id        uint64
	method    string
	frame     []byte
	written   bool
	abandoned bool          // its caller gave up; never write it, drop its answer
	head      chan struct{} // closed when every earlier response has arrived
	resp      chan result   // buffered: the reader never blocks on it
}

type result struct {
	msg message
	err error
}

// NewClient starts the sidecar process.
func NewClient(cfg Config) (*Client, error) {
	cmd := cfg.Cmd
	if cmd == nil {
		cmd = DefaultCommand()
	}
	if cmd.Process != nil {
		return nil, errors.New("Config.Cmd was already started")
	}
	if cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, errors.New("Config.Cmd must not have Stdin or Stdout set: the client owns them")
	}
	jsonl := cfg.JSONL || slices.Contains(cmd.Args[1:], "--jsonl")
	if jsonl && !slices.Contains(cmd.Args[1:], "--jsonl") {
		cmd.Args = append(cmd.Args, "--jsonl")
	}
	c := &Client{
		cmd:         cmd,
		jsonl:       jsonl,
		cancelGrace: orDefault(cfg.CancelGrace, DefaultCancelGrace),
		closeGrace:  orDefault(cfg.CloseGrace, DefaultCloseGrace),
		stderr:      &tailWriter{},
		known:       map[string]bool{},
		wake:        make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	if cmd.Stderr == nil {
		cmd.Stderr = c.stderr
	} else {
		cmd.Stderr = io.MultiWriter(cmd.Stderr, c.stderr)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) && cfg.Cmd == nil {
			return nil, fmt.Errorf("starting the sidecar: %w (install it with `go install github.com/mustard-sidecar/mustard-sidecar/cmd/mustard-sidecar@latest`, or set Config.Cmd)", err)
		}
		return nil, fmt.Errorf("starting the sidecar: %w", err)
	}
	c.stdin = stdin
	limit := cfg.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	c.maxResponse = limit
	if jsonl {
		limit = limit / 3 * 4 // raw bytes travel as base64
	}
	rr := &responseReader{br: bufio.NewReaderSize(stdout, 64<<10), jsonl: jsonl, limit: limit}
	c.wg.Add(2)
	go c.writeLoop()
	go c.readLoop(rr)
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Pid returns the process id of the sidecar.
func (c *Client) Pid() int { return c.cmd.Process.Pid }

// Done is closed once the process has ended (for any reason) and been
// reaped.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the process ended (nil while it runs, or after a clean
// Close).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.Is(c.dead, ErrClosed) {
		return nil
	}
	return c.dead
}

// running reports whether the process still serves requests: not
// closing, and its stdout open. (Done closes only once the process is
// reaped, a little later.)
func (c *Client) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.ended && !c.closing && c.dead == nil
}

// Kill ends the process at once. Outstanding calls fail with an error
// wrapping ErrProcessExited. Close still has to be called to release
// everything (it returns at once).
func (c *Client) Kill() { _ = c.cmd.Process.Kill() }

// Close shuts the sidecar down gracefully: it lets every call made so
// far be written, closes the process's stdin (the sidecar answers what it
// read and exits), waits up to the close grace for it to exit, and kills
// it otherwise. Calls made after Close fail with ErrClosed. Close waits
// for the process and every goroutine of the client; it returns an error
// if the process had to be killed or did not exit cleanly. Calling it
// again returns the same result.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.nudge()
		timer := time.NewTimer(c.closeGrace)
		defer timer.Stop()
		killed := false
		select {
		case <-c.done:
		case <-timer.C:
			killed = true
			c.Kill()
			<-c.done
		}
		c.wg.Wait()
		c.mu.Lock()
		dead := c.dead
		c.mu.Unlock()
		switch {
		case killed:
			c.closeErr = fmt.Errorf("sidecar did not exit within %v of its stdin closing; killed it", c.closeGrace)
		case !errors.Is(dead, ErrClosed):
			c.closeErr = dead
		}
	})
	return c.closeErr
}

func (c *Client) nudge() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes queued requests in order; it is the only writer of
// stdin, so a cancel can be queued while a long request is outstanding.
func (c *Client) writeLoop() {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		if c.dead != nil {
			c.mu.Unlock()
			return
		}
		if len(c.outbox) == 0 {
			closing := c.closing
			c.mu.Unlock()
			if closing {
				_ = c.stdin.Close() // EOF: the sidecar answers what it read and exits
				return
			}
			select {
			case <-c.wake:
			case <-c.done:
			}
			continue
		}
		k := c.outbox[0]
		c.outbox = c.outbox[1:]
		if k.abandoned {
			c.mu.Unlock()
			continue
		}
		k.written = true
		c.inflight = append(c.inflight, k)
		if len(c.inflight) == 1 {
			close(k.head)
		}
		frame := k.frame
		k.frame = nil
		c.mu.Unlock()
		if _, err := c.stdin.Write(frame); err != nil {
			// The read end is gone: the process exited or is exiting. The
			// reader sees stdout end and fails every call.
			c.Kill()
			return
		}
	}
}

// readLoop matches responses to calls in order until stdout ends, then
// reaps the process and fails whatever is left.
func (c *Client) readLoop(rr *responseReader) {
	defer c.wg.Done()
	var streamErr error
	for {
		m, err := rr.next()
		if err != nil {
			streamErr = err
			break
		}
		c.mu.Lock()
		if len(c.inflight) == 0 {
			c.mu.Unlock()
			streamErr = fmt.Errorf("%w: a response arrived with no request outstanding", ErrProtocol)
			break
		}
		k := c.inflight[0]
		c.inflight = c.inflight[1:]
		if len(c.inflight) > 0 {
			close(c.inflight[0].head)
		}
		c.mu.Unlock()
		c.answered.Store(true)
		k.resp <- result{msg: m}
	}
	c.mu.Lock()
	c.ended = true
	c.mu.Unlock()
	if !errors.Is(streamErr, io.EOF) {
		c.Kill() // the stream cannot be trusted any more
	}
	// A process that closed its stdout but does not exit gets the close
	// grace, then is killed: nothing it does can keep the client waiting.
	reaper := time.AfterFunc(c.closeGrace, c.Kill)
	waitErr := c.cmd.Wait()
	reaper.Stop()

	c.mu.Lock()
	var dead error
	switch {
	case c.closing && errors.Is(streamErr, io.EOF) && waitErr == nil:
		dead = ErrClosed
	case errors.Is(streamErr, ErrProtocol):
		dead = &processError{msg: streamErr.Error() + "; the sidecar was stopped", causes: []error{streamErr, ErrProcessExited}}
	default:
		dead = c.exitError(waitErr)
	}
	c.dead = dead
	left := append(c.inflight, c.outbox...)
	c.inflight, c.outbox = nil, nil
	c.mu.Unlock()
	for _, k := range left {
		k.resp <- result{err: dead}
	}
	close(c.done)
}

func (c *Client) exitError(waitErr error) error {
	status := "exit status 0"
	if waitErr != nil {
		status = waitErr.Error()
	}
	msg := "sidecar process exited (" + status + ")"
	if said := c.stderr.summary(); said != "" {
		msg += ": " + said
	}
	return &processError{msg: msg, causes: []error{ErrProcessExited}}
}

// enqueue queues a request; the writer sends it. up front puts it ahead
// of requests not yet written (for cancel).
func (c *Client) enqueue(req *request, raw []byte, field rawField, upFront bool) (*call, error) {
	req.ProtocolVersion = protocolVersion
	req.ID = c.nextID.Add(1)
	frame, err := encodeRequest(req, raw, field, c.jsonl)
	if err != nil {
		return nil, err
	}
	k := &call{id: req.ID, method: req.Method, frame: frame, head: make(chan struct{}), resp: make(chan result, 1)}
	c.mu.Lock()
	switch {
	case c.dead != nil:
		err = c.dead
	case c.closing:
		err = ErrClosed
	case upFront:
		c.outbox = slices.Insert(c.outbox, 0, k)
	default:
		c.outbox = append(c.outbox, k)
	}
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	c.nudge()
	return k, nil
}

// roundTrip sends req and waits for its response. For a start or resume
// (cancellable) a done ctx sends the in-band cancel and waits for the
// sidecar to end the request; otherwise the answer is left to be dropped.
func (c *Client) roundTrip(ctx context.Context, req *request, raw []byte, field rawField, cancellable bool) (*response, message, error) {
	if err := ctx.Err(); err != nil {
		return nil, message{}, err
	}
	k, err := c.enqueue(req, raw, field, false)
	if err != nil {
		return nil, message{}, err
	}
	var r result
	select {
	case r = <-k.resp:
	case <-ctx.Done():
		c.mu.Lock()
		written := k.written
		if !written || !cancellable {
			k.abandoned = true
		}
		c.mu.Unlock()
		if !written || !cancellable {
			return nil, message{}, ctx.Err()
		}
		r = c.cancel(k)
		if r.err == nil {
			// It finished before the cancel reached it: keep the result.
			resp, err := c.decode(k, r.msg)
			if err == nil && !resp.OK {
				err = &cancelledError{err: newError(k.method, resp), ctxErr: ctx.Err()}
			}
			return resp, r.msg, err
		}
		return nil, message{}, &cancelledError{err: r.err, ctxErr: ctx.Err()}
	}
	if r.err != nil {
		return nil, message{}, r.err
	}
	resp, err := c.decode(k, r.msg)
	if err == nil && !resp.OK {
		err = newError(k.method, resp)
	}
	return resp, r.msg, err
}

// cancel asks the sidecar to end the running request k and waits for k's
// response. A sidecar acts on a cancel only while k runs; one read before
// k started (k queued behind earlier requests, or read in the same chunk
// of input) is answered was_running:false and forgotten. So once every
// earlier response is in (k is running or about to), the cancel is sent
// again every cancelResend until k answers. If no answer comes within the
// cancel grace from then, the process is killed (k then fails with the
// exit).
func (c *Client) cancel(k *call) result {
	target := k.id
	send := func() {
		// Its own answer is of no interest (and is dropped): k's says it all.
		_, _ = c.enqueue(&request{Method: "cancel", TargetID: &target}, nil, rawNone, true)
	}
	send()
	head := k.head
	var resend <-chan time.Time
	var grace <-chan time.Time
	for {
		select {
		case r := <-k.resp:
			return r
		case <-head:
			head = nil
			t := time.NewTicker(cancelResend)
			defer t.Stop()
			resend = t.C
			g := time.NewTimer(c.cancelGrace)
			defer g.Stop()
			grace = g.C
		case <-resend:
			send()
		case <-grace:
			grace = nil
			c.Kill()
		}
	}
}

// cancelResend is how often a cancel is repeated while its target runs.
const cancelResend = 100 * time.Millisecond

// decode parses a response and checks it answers k.
func (c *Client) decode(k *call, m message) (*response, error) {
	resp, err := decodeResponse(m)
	if err == nil && resp.ID != k.id {
		err = fmt.Errorf("%w: response id %d answers request %d", ErrProtocol, resp.ID, k.id)
	}
	if err != nil {
		c.Kill()
		return nil, &processError{msg: err.Error() + "; the sidecar was stopped", causes: []error{err, ErrProcessExited}}
	}
	return resp, nil
}

// tailWriter keeps the first line and the last few KiB written to it:
// the sidecar's stderr, for error messages (a fatal message comes first,
// what it led to last).
type tailWriter struct {
	mu       sync.Mutex
	head     []byte
	headDone bool
	buf      []byte
}

const (
	stderrTail = 4 << 10
	lineMax    = 300
)

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.headDone {
		line, _, found := bytes.Cut(p, []byte("\n"))
		w.head = append(w.head, line[:min(len(line), lineMax+1-len(w.head))]...)
		w.headDone = found || len(w.head) > lineMax
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) > stderrTail {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-stderrTail:]...)
	}
	return len(p), nil
}

// summary is the first line, and the last line if it differs.
func (w *tailWriter) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	first := clip(strings.TrimSpace(string(w.head)))
	s := strings.TrimRight(string(w.buf), "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	last := clip(strings.TrimSpace(s))
	if last == "" || last == first {
		return first
	}
	return first + " … " + last
}

func clip(s string) string {
	if len(s) > lineMax {
		return s[:lineMax] + "…"
	}
	return s
}

// outstanding returns how many requests are written and unanswered.
func (c *Client) outstanding() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inflight)
}
