package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// The soak drives one sidecar through a long deterministic mix of requests
// and watches its memory and goroutines. The sidecar runs in this process
// (cli.Serve over two os.Pipe pairs), so the process's RSS and goroutine
// count are the sidecar's plus a small, constant host.

// SoakConfig sets a soak run.
type SoakConfig struct {
	Requests int       // requests in the mix, after the warm-up
	Seed     uint64    // the same seed sends the same requests
	Every    int       // sample RSS and goroutines every Every requests
	CheckRSS bool      // fail on RSS growth and peak (off for -race builds)
	Log      io.Writer // progress lines as samples are taken; nil for none
}

// DefaultSoakConfig runs 100,000 requests: a minute or two on two cores.
func DefaultSoakConfig() SoakConfig {
	return SoakConfig{Requests: 100_000, Seed: 1, Every: 2000, CheckRSS: !hosttest.RaceEnabled}
}

const (
	// soakRefRequests: the RSS after this many requests is the reference
	// for growth. The session's caches fill for a while longer (its 4,096
	// snapshots take ~13,000 requests), which soakMaxGrowth allows for;
	// growth past it is memory kept that should not be.
	soakRefRequests = 2000
	soakMaxGrowth   = 1.5
	soakMaxPeakRSS  = 256 << 20
	// soakMemoryLimit is cli.Main's soft limit, so the collector behaves
	// as in the real process.
	soakMemoryLimit = 192 << 20
	// soakSettle bounds the wait for the server to end and for its
	// goroutines to exit; reaching it is a failure, not a slow machine.
	soakSettle = 20 * time.Second
	// soakMaxAge: a suspension older than this many requests is dropped
	// (abandoned), like a host giving up on a call. 1,000 requests make
	// at most 1,000 snapshots, far fewer than the session's 4,096, so a
	// kept snapshot id is always still known to the session.
	soakMaxAge = 1000
	// soakMaxPending suspensions are kept; older ones are abandoned,
	// which exercises the session's eviction of parked executions (64).
	soakMaxPending = 96
	// soakProgramSlack: a program that may have been pushed out of the
	// session's program cache (256 entries) by unique compiles since its
	// last use is started with its bytes as well as its id, as a host that
	// tracks the cache would.
	soakProgramSlack = 128
	soakShowFirst    = 5 // unexpected responses printed in full
)

// soakKey is the soak host's snapshot key.
var soakKey = []byte("soak-host-key-0123456789abcdef!!")

// Kinds of request in the mix.
type soakKind int

const (
	kCompileRepeat soakKind = iota
	kCompileUnique
	kCompileError
	kStartComplete
	kStartSuspend
	kResumeHot
	kResumeRaw
	kResumeCancel
	kThrow
	kLimitInstructions
	kLimitDepth
	kBombString
	kBombObjects
	kUnknownMethod
	kBadVersion
	kUnknownProgram
	kForgedToken
	numSoakKinds
)

// soakMix gives each kind's name and weight. Memory bombs are 1 in 200
// requests: each takes tens of milliseconds, the rest well under one.
var soakMix = [numSoakKinds]struct {
	name   string
	weight int
}{
	kCompileRepeat:     {"compile, repeated source", 180},
	kCompileUnique:     {"compile, new source", 80},
	kCompileError:      {"compile, syntax error", 60},
	kStartComplete:     {"start, completes", 360},
	kStartSuspend:      {"start, suspends", 340},
	kResumeHot:         {"resume by snapshot_id", 400},
	kResumeRaw:         {"resume from bytes + policy", 140},
	kResumeCancel:      {"resume, cancelled", 40},
	kThrow:             {"start, guest throws", 120},
	kLimitInstructions: {"start, for(;;){}", 60},
	kLimitDepth:        {"start, endless recursion", 40},
	kBombString:        {"memory bomb, string doubling", 5},
	kBombObjects:       {"memory bomb, object push loop", 5},
	kUnknownMethod:     {"error: unknown method", 30},
	kBadVersion:        {"error: protocol_version", 30},
	kUnknownProgram:    {"error: unknown program_id", 30},
	kForgedToken:       {"error: forged snapshot_token", 30},
}

// Guest programs, compiled once in the warm-up. n is an input.
var soakSources = []struct{ name, src string }{
	{"sum", "let s = 0; for (let i = 0; i < 1000; i++) s += i; s"},
	{"input", `"v" + n`},
	{"object", "const o = { n, sq: n * n, xs: [n, n + 1] }; o.xs[1] * 2 + o.sq"},
	{"suspend", "const a = cap(n); const b = cap(a + 1); a + b"},
	{"throw", `throw new TypeError("boom " + n)`},
	{"loop", "for(;;){}"},
	{"recurse", "function f(d) { return f(d + 1) + 1 } f(0)"},
	{"bombString", "let s = 'x'; for(;;) s += s"},
	{"bombObjects", "const a = []; for(;;) a.push({ x: a.length })"},
}

var soakSyntaxErrors = []string{
	"let = ;",
	"function (",
	"}",
	// Deeper than the 1,000 brackets the compiler accepts.
	"(" + strings.Repeat("[", 1100) + strings.Repeat("]", 1100) + ")",
}

const (
	limInstructions = "Limit: instruction budget exhausted"
	limHeap         = "Limit: heap limit exceeded"
	limAllocations  = "Limit: allocation budget exhausted"
	limDepth        = "Limit: call depth limit exceeded"
	limCancelled    = "Limit: execution cancelled"
)

// SoakSample is one reading taken during the mix.
type SoakSample struct {
	Requests   int
	Elapsed    time.Duration
	RSS        int64 // VmRSS as the mix left it; 0 where /proc is unavailable
	Settled    int64 // VmRSS after debug.FreeOSMemory: what is retained
	Goroutines int
}

// SoakReport is the outcome of a soak.
type SoakReport struct {
	Config    SoakConfig
	Machine   Machine
	LoadAfter string
	Date      time.Time

	WarmUp     int // requests before the mix
	Requests   int // requests in the mix
	Wall       time.Duration
	Kinds      [numSoakKinds]int
	Outcomes   map[string]int // how the memory bombs ended
	Unexpected int
	First      []string // the first unexpected responses, described

	Samples  []SoakSample
	RSSRefAt int   // requests after which RSSRef was read
	RSSRef   int64 // settled VmRSS after RSSRefAt requests
	RSSFinal int64 // settled VmRSS after the last request
	RSSPeak  int64 // VmHWM at the end
	// The request during which VmHWM rose the most, and by how much: where
	// the peak comes from.
	HWMWarmUp   int64 // VmHWM after the warm-up
	HWMJump     int64
	HWMJumpAt   int
	HWMJumpKind string

	GoroutinesBefore int // before the server started (for reference)
	GoroutinesBase   int // after the warm-up, the server goroutine running
	GoroutinesEnd    int // after the server returned and closed its session
	ServeErr         error
}

// Soak runs the mix against one in-process sidecar. An error means the
// soak itself could not go on (a broken stream); a misbehaving sidecar is
// reported in the SoakReport (see Failures).
func Soak(cfg SoakConfig) (*SoakReport, error) {
	if cfg.Requests < 1 {
		return nil, fmt.Errorf("soak: %d requests", cfg.Requests)
	}
	if cfg.Every < 1 {
		cfg.Every = cfg.Requests
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(soakMemoryLimit))
	}
	rep := &SoakReport{Config: cfg, Machine: ReadMachine(), Date: time.Now(), Outcomes: map[string]int{}}

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	defer inR.Close()
	defer outR.Close()
	rep.GoroutinesBefore = runtime.NumGoroutine()
	served := make(chan error, 1)
	go func() {
		err := cli.Serve(protocol.Options{Transport: protocol.Binary}, inR, outW)
		// The host reads EOF after the last response.
		outW.Close()
		served <- err
	}()
	// On every path out, the server sees EOF; closing twice is harmless.
	defer inW.Close()

	s := &soaker{
		c:   &soakClient{w: frame.NewBinaryWriter(inW), r: frame.NewBinaryReader(outR)},
		rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed_50a4)),
		rep: rep,
	}
	if err := s.warmUp(); err != nil {
		return nil, err
	}
	rep.WarmUp = int(s.c.id)
	runtime.GC()
	rep.GoroutinesBase = runtime.NumGoroutine()
	rep.HWMWarmUp = procStatus("VmHWM")
	hwm := rep.HWMWarmUp

	rep.RSSRefAt = min(soakRefRequests, cfg.Requests)
	total := 0
	for _, m := range soakMix {
		total += m.weight
	}
	began := time.Now()
	logf(cfg.Log, "soak: %d requests, seed %d", cfg.Requests, cfg.Seed)
	for i := 1; i <= cfg.Requests; i++ {
		s.age()
		k, err := s.do(s.pick(total))
		if err != nil {
			return nil, fmt.Errorf("request %d: %w", s.c.id, err)
		}
		// Reading /proc costs ~20 µs; it attributes the peak to a request.
		if now := procStatus("VmHWM"); now > hwm {
			if now-hwm > rep.HWMJump {
				rep.HWMJump, rep.HWMJumpAt, rep.HWMJumpKind = now-hwm, i, soakMix[k].name
			}
			hwm = now
		}
		sample := i%cfg.Every == 0 || i == cfg.Requests
		if !sample && i != rep.RSSRefAt {
			continue
		}
		sm := SoakSample{Requests: i, Elapsed: time.Since(began), RSS: procStatus("VmRSS")}
		sm.Settled = settledRSS()
		sm.Goroutines = runtime.NumGoroutine()
		if i == rep.RSSRefAt {
			rep.RSSRef = sm.Settled
		}
		if sample {
			rep.Samples = append(rep.Samples, sm)
			logf(cfg.Log, "%7d requests %8.1fs  RSS %6.1f MiB (settled %6.1f)  VmHWM %6.1f MiB  %4d goroutines  %d unexpected",
				sm.Requests, sm.Elapsed.Seconds(), mib(sm.RSS), mib(sm.Settled), mib(hwm), sm.Goroutines, rep.Unexpected)
		}
	}
	rep.Wall = time.Since(began)
	rep.Requests = cfg.Requests
	rep.RSSFinal = rep.Samples[len(rep.Samples)-1].Settled

	// Shut down as a host does: EOF on stdin. Serve answers what it read,
	// closes its session (ending parked executions) and returns.
	inW.Close()
	if extra, err := io.ReadAll(outR); err != nil || len(extra) > 0 {
		rep.ServeErr = fmt.Errorf("after EOF: %d unread response bytes (%v)", len(extra), err)
	}
	select {
	case err := <-served:
		if err != nil && rep.ServeErr == nil {
			rep.ServeErr = err
		}
	case <-time.After(soakSettle):
		return nil, fmt.Errorf("the server did not return within %v of EOF", soakSettle)
	}
	rep.RSSPeak = procStatus("VmHWM")
	// The server goroutine was part of the baseline and has returned, so
	// at most base-1 may remain; poll, as ended executions' goroutines
	// exit asynchronously.
	deadline := time.Now().Add(soakSettle)
	for runtime.NumGoroutine() > rep.GoroutinesBase-1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	rep.GoroutinesEnd = runtime.NumGoroutine()
	rep.LoadAfter = loadAverage()
	return rep, nil
}

// Failures lists every way the run failed its checks; empty means passed.
func (r *SoakReport) Failures() []string {
	var f []string
	if r.Unexpected > 0 {
		f = append(f, fmt.Sprintf("%d unexpected responses", r.Unexpected))
	}
	if r.ServeErr != nil {
		f = append(f, fmt.Sprintf("server: %v", r.ServeErr))
	}
	if r.Config.CheckRSS && r.RSSRef > 0 {
		if float64(r.RSSFinal) > soakMaxGrowth*float64(r.RSSRef) {
			f = append(f, fmt.Sprintf("final RSS %.1f MiB > %.1f× the %.1f MiB after %d requests",
				mib(r.RSSFinal), soakMaxGrowth, mib(r.RSSRef), r.RSSRefAt))
		}
		if r.RSSPeak >= soakMaxPeakRSS {
			f = append(f, fmt.Sprintf("peak RSS %.1f MiB ≥ %d MiB", mib(r.RSSPeak), soakMaxPeakRSS>>20))
		}
	}
	// The baseline counted the server goroutine, which must have ended.
	if r.GoroutinesEnd > r.GoroutinesBase-1 {
		f = append(f, fmt.Sprintf("%d goroutines at the end, baseline %d (incl. the server goroutine)", r.GoroutinesEnd, r.GoroutinesBase))
	}
	return f
}

// Print writes the samples and the summary.
func (r *SoakReport) Print(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "mustard-sidecar soak, %s\n", r.Date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s; load average %s at start, %s at end\n", m.CPUs, m.Model, m.Go, m.Load, r.LoadAfter)
	fmt.Fprintf(w, "seed %d, %d requests after a warm-up of %d\n\n", r.Config.Seed, r.Requests, r.WarmUp)
	fmt.Fprintln(w, "| requests | elapsed | req/s (interval) | VmRSS | VmRSS settled | goroutines |")
	fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | ---: | ---: |")
	prev := SoakSample{}
	for _, s := range r.Samples {
		rate := float64(s.Requests-prev.Requests) / (s.Elapsed - prev.Elapsed).Seconds()
		fmt.Fprintf(w, "| %d | %.1f s | %.0f | %.1f MiB | %.1f MiB | %d |\n", s.Requests, s.Elapsed.Seconds(), rate, mib(s.RSS), mib(s.Settled), s.Goroutines)
		prev = s
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "requests by kind:")
	for k, n := range r.Kinds {
		fmt.Fprintf(w, "  %-32s %7d\n", soakMix[k].name, n)
	}
	if len(r.Outcomes) > 0 {
		fmt.Fprintln(w, "memory bombs ended with:")
		for _, k := range slices.Sorted(maps.Keys(r.Outcomes)) {
			fmt.Fprintf(w, "  %-60s %5d\n", k, r.Outcomes[k])
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "total requests:        %d (+%d warm-up)\n", r.Requests, r.WarmUp)
	fmt.Fprintf(w, "wall time:             %.1f s\n", r.Wall.Seconds())
	fmt.Fprintf(w, "throughput:            %.0f requests/s\n", float64(r.Requests)/r.Wall.Seconds())
	fmt.Fprintf(w, "RSS after %d requests: %.1f MiB (settled: after debug.FreeOSMemory)\n", r.RSSRefAt, mib(r.RSSRef))
	growth := 0.0
	if r.RSSRef > 0 {
		growth = float64(r.RSSFinal) / float64(r.RSSRef)
	}
	fmt.Fprintf(w, "final RSS:             %.1f MiB settled (%.2f×; limit %.1f×)\n", mib(r.RSSFinal), growth, soakMaxGrowth)
	fmt.Fprintf(w, "peak RSS (VmHWM):      %.1f MiB (limit < %d MiB); %.1f MiB after the warm-up\n", mib(r.RSSPeak), soakMaxPeakRSS>>20, mib(r.HWMWarmUp))
	if r.HWMJump > 0 {
		fmt.Fprintf(w, "largest VmHWM rise:    +%.1f MiB during request %d of the mix (%s)\n", mib(r.HWMJump), r.HWMJumpAt, r.HWMJumpKind)
	}
	fmt.Fprintf(w, "goroutines:            %d at baseline (server running), %d at the end (server returned); %d before the server started\n",
		r.GoroutinesBase, r.GoroutinesEnd, r.GoroutinesBefore)
	fmt.Fprintf(w, "unexpected responses:  %d\n", r.Unexpected)
	for _, u := range r.First {
		fmt.Fprintf(w, "  %s\n", u)
	}
	if !r.Config.CheckRSS {
		fmt.Fprintln(w, "RSS checks skipped (race-instrumented build)")
	}
	if f := r.Failures(); len(f) > 0 {
		fmt.Fprintf(w, "FAIL: %s\n", strings.Join(f, "; "))
	} else {
		fmt.Fprintln(w, "PASS")
	}
}

// settledRSS is VmRSS after a collection that returns free memory to the
// OS. The growth check compares settled figures: VmRSS as the mix leaves it
// swings by a quarter with the garbage of the last memory bomb and the
// scavenger's pace, which is noise, not retention.
func settledRSS() int64 {
	debug.FreeOSMemory()
	return procStatus("VmRSS")
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// procStatus reads a "kB" field of /proc/self/status in bytes, or 0.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v) // "1234", "kB"
			if len(f) == 0 {
				return 0
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// soakClient speaks binary frames over the pipes, one request at a time.
type soakClient struct {
	w  *frame.BinaryWriter
	r  *frame.BinaryReader
	id uint64
}

// soakResponse is what the soak reads of a response: a step response
// (host.go) with the envelope the soak checks on every response.
type soakResponse struct {
	ID      json.Number `json:"id"`
	Version json.Number `json:"protocol_version"`
	stepResponse

	raw     []byte // the header as received
	payload []byte // a copy of the frame payload
}

// call sends fields as one request, with a fresh id and protocol version
// 2 unless fields sets one, and reads the response. Only a broken stream
// is an error; the echoed id and version are checked here because every
// response must carry them.
func (c *soakClient) call(method string, fields map[string]any, payload []byte) (*soakResponse, error) {
	c.id++
	fields[wire.FieldID], fields[wire.FieldMethod] = c.id, method
	if _, ok := fields[wire.FieldProtocolVersion]; !ok {
		fields[wire.FieldProtocolVersion] = wire.ProtocolVersion
	}
	hdr, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	if err := c.w.Write(hdr, payload); err != nil {
		return nil, err
	}
	f, err := c.r.Next()
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	r := &soakResponse{raw: bytes.Clone(f.Header), payload: bytes.Clone(f.Payload)}
	if err := json.Unmarshal(f.Header, r); err != nil {
		return nil, fmt.Errorf("response %.300s: %w", f.Header, err)
	}
	if want := strconv.FormatUint(c.id, 10); string(r.ID) != want || r.Version != "2" {
		return nil, fmt.Errorf("response %.300s to request %s: wrong id or protocol_version", f.Header, want)
	}
	return r, nil
}

type soakProgram struct {
	name, src string
	id        string
	bytes     []byte
	touched   int // soaker.uniques when the session last saw the program
}

// suspension is a start or resume that suspended on cap.
type suspension struct {
	snapID, policyID string
	snap             []byte
	second           bool    // suspended on the second call (a is known)
	a                float64 // the answer to the first call
	born             int     // request number
}

type soaker struct {
	c        *soakClient
	rng      *rand.Rand
	rep      *SoakReport
	programs map[string]*soakProgram
	pending  []*suspension
	uniques  int // new sources compiled
	lastKind soakKind
}

func (s *soaker) pick(total int) soakKind {
	x := s.rng.IntN(total)
	for k, m := range soakMix {
		if x < m.weight {
			return soakKind(k)
		}
		x -= m.weight
	}
	panic("unreachable")
}

// warmUp compiles the programs and sends each kind of request once, so
// that lazily started process-wide goroutines and caches exist before
// the baseline; it leaves no execution parked.
func (s *soaker) warmUp() error {
	s.programs = map[string]*soakProgram{}
	for _, p := range soakSources {
		r, err := s.c.call(wire.MethodCompile, map[string]any{wire.FieldSource: p.src}, nil)
		if err != nil {
			return err
		}
		if !r.OK || r.Result.ProgramID != sha256Hex(r.payload) {
			return fmt.Errorf("warm-up: compile %s: %.300s", p.name, r.raw)
		}
		s.programs[p.name] = &soakProgram{name: p.name, src: p.src, id: r.Result.ProgramID, bytes: r.payload}
	}
	for k := range numSoakKinds {
		if _, err := s.do(k); err != nil {
			return err
		}
	}
	for len(s.pending) > 0 {
		if _, err := s.do(kResumeCancel); err != nil {
			return err
		}
	}
	s.rep.Kinds = [numSoakKinds]int{}
	clear(s.rep.Outcomes)
	return nil
}

// age abandons suspensions that are too old or too many.
func (s *soaker) age() {
	now := int(s.c.id)
	drop := 0
	for drop < len(s.pending) && (now-s.pending[drop].born > soakMaxAge || len(s.pending)-drop > soakMaxPending) {
		drop++
	}
	s.pending = s.pending[drop:]
}

// unexpected records a response that is not what the request should give.
func (s *soaker) unexpected(k soakKind, r *soakResponse, format string, args ...any) {
	s.rep.Unexpected++
	if len(s.rep.First) < soakShowFirst {
		raw := string(r.raw)
		if len(raw) > 400 {
			raw = raw[:400] + "…"
		}
		s.rep.First = append(s.rep.First, fmt.Sprintf("request %s (%s): %s; got %s", r.ID, soakMix[k].name, fmt.Sprintf(format, args...), raw))
	}
}

// do sends one request of kind k, or of the kind it stands in for it, and
// checks its response. It returns the kind sent.
func (s *soaker) do(k soakKind) (soakKind, error) {
	err := s.send(k)
	return s.lastKind, err
}

func (s *soaker) send(k soakKind) error {
	// Kinds that act on a suspension start one when none is pending.
	if len(s.pending) == 0 && (k == kResumeHot || k == kResumeRaw || k == kResumeCancel || k == kForgedToken) {
		k = kStartSuspend
	}
	s.rep.Kinds[k]++
	s.lastKind = k
	n := s.rng.IntN(1000)
	switch k {
	case kCompileRepeat:
		p := s.programs[soakSources[s.rng.IntN(len(soakSources))].name]
		r, err := s.c.call(wire.MethodCompile, map[string]any{wire.FieldSource: p.src}, nil)
		if err != nil {
			return err
		}
		p.touched = s.uniques
		if !r.OK || r.Result.Kind != wire.KindProgram || r.Result.ProgramID != p.id || !bytes.Equal(r.payload, p.bytes) {
			s.unexpected(k, r, "want program %s again", p.id)
		}
	case kCompileUnique:
		s.uniques++
		src := fmt.Sprintf("const k = %d; k * 2;", s.uniques)
		r, err := s.c.call(wire.MethodCompile, map[string]any{wire.FieldSource: src}, nil)
		if err != nil {
			return err
		}
		if !r.OK || r.Result.Kind != wire.KindProgram || r.Result.ProgramID != sha256Hex(r.payload) {
			s.unexpected(k, r, "want a program whose id is the SHA-256 of its bytes")
		}
	case kCompileError:
		src := soakSyntaxErrors[s.rng.IntN(len(soakSyntaxErrors))]
		r, err := s.c.call(wire.MethodCompile, map[string]any{wire.FieldSource: src}, nil)
		if err != nil {
			return err
		}
		if r.OK || !strings.HasPrefix(r.Error, "Parse: ") {
			s.unexpected(k, r, "want a Parse: error")
		}
	case kStartComplete:
		return s.startComplete(k, n)
	case kStartSuspend:
		r, err := s.start("suspend", n, nil)
		if err != nil {
			return err
		}
		s.expectSuspension(k, r, float64(n), &suspension{})
	case kResumeHot, kResumeRaw:
		return s.resume(k, n)
	case kResumeCancel:
		i := s.rng.IntN(len(s.pending))
		sp := s.pending[i]
		s.pending = append(s.pending[:i], s.pending[i+1:]...)
		r, err := s.c.call(wire.MethodResume, s.cachedResume(sp, map[string]any{wire.FieldType: wire.PayloadCancelled}), nil)
		if err != nil {
			return err
		}
		s.expectError(k, r, limCancelled)
	case kThrow:
		r, err := s.start("throw", n, nil)
		if err != nil {
			return err
		}
		// The message, then one "\n  at" line per guest frame.
		want := "Runtime: TypeError: boom " + strconv.Itoa(n)
		if r.OK || !(r.Error == want || strings.HasPrefix(r.Error, want+"\n  at ")) {
			s.unexpected(k, r, "want %q with a traceback", want)
		}
	case kLimitInstructions:
		// Mostly a small budget (quick); sometimes the default million.
		limits := map[string]any{wire.FieldInstructionBudget: 20_000}
		if n%10 == 0 {
			limits = nil
		}
		r, err := s.start("loop", n, limits)
		if err != nil {
			return err
		}
		s.expectError(k, r, limInstructions)
	case kLimitDepth:
		r, err := s.start("recurse", n, nil)
		if err != nil {
			return err
		}
		s.expectError(k, r, limDepth)
	case kBombString, kBombObjects:
		name, wants := "bombString", []string{limHeap}
		if k == kBombObjects {
			// Which budget runs out first depends on the heap figure at
			// that moment, as in the end-to-end memory bomb tests.
			name, wants = "bombObjects", []string{limHeap, limInstructions, limAllocations}
		}
		r, err := s.start(name, n, nil)
		if err != nil {
			return err
		}
		s.rep.Outcomes[soakMix[k].name+": "+r.Error]++
		s.expectError(k, r, wants...)
	case kUnknownMethod:
		r, err := s.c.call("run", map[string]any{wire.FieldSource: "1;"}, nil)
		if err != nil {
			return err
		}
		s.expectError(k, r, `unknown method "run"`)
	case kBadVersion:
		versions := []struct {
			v    any
			want string
		}{{1, "1"}, {3, "3"}, {"2", `"2"`}}
		v := versions[n%len(versions)]
		r, err := s.c.call(wire.MethodCompile, map[string]any{wire.FieldSource: "1;", wire.FieldProtocolVersion: v.v}, nil)
		if err != nil {
			return err
		}
		s.expectError(k, r, "unsupported sidecar protocol version "+v.want+"; expected 2")
	case kUnknownProgram:
		var id [32]byte
		for i := range id {
			id[i] = byte(s.rng.Uint32())
		}
		hexID := hex.EncodeToString(id[:])
		r, err := s.c.call(wire.MethodStart, map[string]any{wire.FieldProgramID: hexID, wire.FieldOptions: soakOptions(n, nil)}, nil)
		if err != nil {
			return err
		}
		s.expectError(k, r, "unknown program_id `"+hexID+"`")
	case kForgedToken:
		// The newest suspension, which stays pending: a refused resume
		// must leave it resumable.
		sp := s.pending[len(s.pending)-1]
		f := s.cachedResume(sp, soakValue(n))
		auth := f[wire.FieldAuth].(map[string]any)
		auth[wire.FieldSnapshotToken] = hosttest.Token([]byte("a forger's key, not the host's.."), sp.snapID)
		r, err := s.c.call(wire.MethodResume, f, nil)
		if err != nil {
			return err
		}
		s.expectError(k, r, "raw snapshot restore rejected a tampered or unauthenticated snapshot")
	default:
		panic(fmt.Sprint("unknown kind ", k))
	}
	return nil
}

func (s *soaker) startComplete(k soakKind, n int) error {
	names := []string{"sum", "input", "object"}
	name := names[n%len(names)]
	r, err := s.start(name, n, nil)
	if err != nil {
		return err
	}
	if !r.OK || r.Result.Step.Type != wire.StepCompleted {
		s.unexpected(k, r, "want completed")
		return nil
	}
	v := r.Result.Step.Value
	switch name {
	case "sum":
		if f, ok := finite(v); !ok || f != 499500 {
			s.unexpected(k, r, "want 499500")
		}
	case "input":
		if str, ok := stringValue(v); !ok || str != "v"+strconv.Itoa(n) {
			s.unexpected(k, r, "want \"v%d\"", n)
		}
	case "object":
		if f, ok := finite(v); !ok || f != float64((n+1)*2+n*n) {
			s.unexpected(k, r, "want %d", (n+1)*2+n*n)
		}
	}
	return nil
}

// resume answers a pending suspension, hot (by id) or from its bytes.
func (s *soaker) resume(k soakKind, n int) error {
	var sp *suspension
	if k == kResumeHot {
		// The newest: its execution is still parked, so this is the
		// fast path (an older one may have been evicted and replays).
		sp = s.pending[len(s.pending)-1]
		s.pending = s.pending[:len(s.pending)-1]
	} else {
		i := s.rng.IntN(len(s.pending))
		sp = s.pending[i]
		s.pending = append(s.pending[:i], s.pending[i+1:]...)
	}
	var r *soakResponse
	var err error
	if k == kResumeHot {
		r, err = s.c.call(wire.MethodResume, s.cachedResume(sp, soakValue(n)), nil)
	} else {
		f := map[string]any{
			wire.FieldPolicy:  hosttest.Policy(soakKey, sp.snapID, []string{"cap"}, map[string]any{}),
			wire.FieldPayload: soakValue(n),
		}
		r, err = s.c.call(wire.MethodResume, f, sp.snap)
	}
	if err != nil {
		return err
	}
	// The suspend program: a = cap(n); b = cap(a + 1); a + b.
	if !sp.second {
		s.expectSuspension(k, r, float64(n+1), &suspension{second: true, a: float64(n)})
		return nil
	}
	if !r.OK || r.Result.Step.Type != wire.StepCompleted {
		s.unexpected(k, r, "want completed")
	} else if f, ok := finite(r.Result.Step.Value); !ok || f != sp.a+float64(n) {
		s.unexpected(k, r, "want %v", sp.a+float64(n))
	}
	return nil
}

// start starts a warm-up program with input n under limits (nil: the
// defaults).
func (s *soaker) start(name string, n int, limits map[string]any) (*soakResponse, error) {
	p := s.programs[name]
	f := map[string]any{wire.FieldProgramID: p.id, wire.FieldOptions: soakOptions(n, limits)}
	var payload []byte
	if s.uniques-p.touched > soakProgramSlack {
		payload = p.bytes
	}
	p.touched = s.uniques
	return s.c.call(wire.MethodStart, f, payload)
}

// expectSuspension checks a suspension on cap(arg) and keeps it pending.
func (s *soaker) expectSuspension(k soakKind, r *soakResponse, arg float64, sp *suspension) {
	st := r.Result.Step
	var args []json.RawMessage
	if !r.OK || st.Type != wire.StepSuspended || st.Capability != "cap" || json.Unmarshal(st.Args, &args) != nil || len(args) != 1 {
		s.unexpected(k, r, "want suspended on cap(%v)", arg)
		return
	}
	if f, ok := finite(args[0]); !ok || f != arg || r.Result.SnapshotID != sha256Hex(r.payload) || r.Result.PolicyID == "" {
		s.unexpected(k, r, "want cap(%v) with a snapshot whose id is the SHA-256 of its bytes", arg)
		return
	}
	sp.snapID, sp.policyID, sp.snap, sp.born = r.Result.SnapshotID, r.Result.PolicyID, r.payload, int(s.c.id)
	s.pending = append(s.pending, sp)
}

func (s *soaker) expectError(k soakKind, r *soakResponse, wants ...string) {
	if !r.OK {
		for _, w := range wants {
			if r.Error == w {
				return
			}
		}
	}
	s.unexpected(k, r, "want the error %q", wants)
}

func (s *soaker) cachedResume(sp *suspension, payload map[string]any) map[string]any {
	return map[string]any{
		wire.FieldSnapshotID: sp.snapID,
		wire.FieldPolicyID:   sp.policyID,
		wire.FieldAuth:       hosttest.Auth(soakKey, sp.snapID),
		wire.FieldPayload:    payload,
	}
}

func soakOptions(n int, limits map[string]any) map[string]any {
	if limits == nil {
		limits = map[string]any{}
	}
	return map[string]any{
		wire.FieldInputs:       map[string]any{"n": map[string]any{"Number": map[string]any{"Finite": n}}},
		wire.FieldCapabilities: []string{"cap"},
		wire.FieldLimits:       limits,
	}
}

func soakValue(n int) map[string]any {
	return map[string]any{wire.FieldType: wire.PayloadValue, wire.FieldValue: map[string]any{"Number": map[string]any{"Finite": n}}}
}

// finite reads a StructuredValue {"Number":{"Finite":x}}.
func finite(raw json.RawMessage) (float64, bool) {
	var v struct {
		Number *struct {
			Finite *float64 `json:"Finite"`
		} `json:"Number"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.Number == nil || v.Number.Finite == nil {
		return 0, false
	}
	return *v.Number.Finite, true
}

// stringValue reads a StructuredValue {"String":s}.
func stringValue(raw json.RawMessage) (string, bool) {
	var v struct {
		String *string `json:"String"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.String == nil {
		return "", false
	}
	return *v.String, true
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
