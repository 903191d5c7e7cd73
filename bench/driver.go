package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// Config sets what the driver measures. Counts are totals over all rounds.
type Config struct {
	Rounds     int   // alternating rounds of ours and the peer
	Hot        int   // hot round trips per transport
	HotChain   int   // suspensions per execution before a fresh start
	Compile    int   // compile requests per workload on a warm process
	ColdStart  int   // process spawns measured to the first compile answered
	Workload   int   // end-to-end runs per workload and variant
	ColdResume int   // cold resumes per step in ColdSteps
	ColdSteps  []int // suspension numbers cold resumes start from
	History    int   // hot round trips per step in HistorySteps
	// HistorySteps are suspension numbers from which hot round trips with
	// ~1 KiB arguments are timed: every suspended response carries the
	// whole journal, so their cost grows with it.
	HistorySteps []int
	Large        int  // runs of the 40 × 50 KB answers program, and of the 6 × 880 KB one
	Peer         bool // also run the reference implementation
	// Gallery, if set, is a local checkout of the reference's
	// examples/programmatic-tool-calls: its programs are recorded on the
	// peer (RecordGallery) and measured end to end like the workloads.
	Gallery string
	// ColdChecks, if positive, limits the check before timing that each
	// workload runs cold (every resume in a fresh process) as it runs hot
	// to the first ColdChecks workloads; every workload is checked
	// otherwise. Each check spawns a process per call: tests set it.
	ColdChecks int
	Log        io.Writer // progress lines; nil for none
}

// DefaultConfig finishes in well under two minutes on two cores.
func DefaultConfig() Config {
	return Config{
		Rounds:       5,
		Hot:          5000,
		HotChain:     100,
		Compile:      200,
		ColdStart:    50,
		Workload:     500,
		ColdResume:   30,
		ColdSteps:    []int{1, 10, 100},
		History:      100,
		HistorySteps: []int{1, 500},
		Large:        10,
		Peer:         true,
	}
}

// Programs shared with the peer (bench/peer/peer.js has the same text).
const (
	hotSource = "let n = 0; for (;;) { n += cap(n); }"
	// Each call carries a ~1 KiB argument, so the journal grows by ~1 KiB
	// per call.
	coldSource = "let acc = 0;\nfor (let i = 0; i < steps; i++) {\n  const r = cap({ i, note });\n  acc += r.n;\n}\nacc;"
	coldNote   = "0123456789abcdef" // repeated 64 times
	coldLimit  = 1000000            // the loop bound: never reached
)

var coldInputs = []byte(`{"note":{"String":"` + strings.Repeat(coldNote, 64) + `"},"steps":{"Number":{"Finite":` + strconv.Itoa(coldLimit) + `}}}`)

func coldAnswer(n int) []byte {
	return []byte(`{"` + wire.FieldType + `":"` + wire.PayloadValue + `","` + wire.FieldValue + `":{"Object":{"n":{"Number":{"Finite":` + strconv.Itoa(n) + `}}}}}`)
}

var (
	capJSON     = []byte(`["cap"]`)
	oneValue    = []byte(`{"` + wire.FieldType + `":"` + wire.PayloadValue + `","` + wire.FieldValue + `":{"Number":{"Finite":1}}}`)
	cancelled   = []byte(`{"` + wire.FieldType + `":"` + wire.PayloadCancelled + `"}`)
	pingRequest = []byte(requestPrefix + `0,"` + wire.FieldMethod + `":"` + wire.MethodPing + `"}`)
	noInputs    = []byte(`{}`)
)

// Row is one metric: our samples and, when the peer has a counterpart,
// the peer's.
type Row struct {
	Name    string
	Ours    []time.Duration
	Peer    []time.Duration
	PeerKey string // which peer measurement applies; "" for none
	Group   string // the workload's group, for workload rows
}

// Report is the outcome of one driver run.
type Report struct {
	Date        time.Time
	Machine     Machine
	LoadAfter   string
	Rows        []*Row
	PeerInfo    string // what ran as the peer
	PeerSkipped string // why the peer column is empty
	SidecarEnv  string // Go runtime settings the sidecars inherit (sidecarEnv), if any

	peer  map[string][]time.Duration // by Row.PeerKey
	Notes []Note                     // figures that are not durations
	// Crossings are the round trips each workload takes in one mode and in
	// batch mode (host_calls), checked before any timing.
	Crossings []Crossing
	// NoBatch says why there are no batch-mode rows ("" when there are).
	NoBatch string
}

// Note is a figure printed below the table; a later note with the same key
// replaces an earlier one.
type Note struct{ Key, Text string }

func (r *Report) note(key, text string) {
	for i := range r.Notes {
		if r.Notes[i].Key == key {
			r.Notes[i].Text = text
			return
		}
	}
	r.Notes = append(r.Notes, Note{key, text})
}

func (r *Report) row(name, peerKey string) *Row {
	for _, x := range r.Rows {
		if x.Name == name {
			return x
		}
	}
	x := &Row{Name: name, PeerKey: peerKey}
	r.Rows = append(r.Rows, x)
	return x
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// share splits a total count over rounds.
func share(total, round, rounds int) int {
	n := total / rounds
	if round < total%rounds {
		n++
	}
	return n
}

// Run measures the real binary over pipes and, unless disabled or
// unavailable, the peer, alternating rounds between them.
func Run(cfg Config) (*Report, error) {
	if cfg.Rounds < 1 {
		cfg.Rounds = 1
	}
	if cfg.HotChain < 1 {
		cfg.HotChain = 1
	}
	// The host side runs on one thread, like a Node host's event loop: with
	// two, Go's scheduler adds ~15 µs of cross-thread wakeups to every
	// pipe round trip on a 2-core VM, which is the harness, not the
	// sidecar. The pipe floor row shows what is left.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rep := &Report{Date: time.Now(), Machine: ReadMachine(), SidecarEnv: sidecarEnv()}
	workloads, err := LoadWorkloads()
	if err != nil {
		return nil, err
	}
	if cfg.Gallery != "" {
		logf(cfg.Log, "recording the gallery in %s…", cfg.Gallery)
		gallery, skipped, err := RecordGallery(cfg, cfg.Gallery)
		if err != nil {
			return nil, err
		}
		for _, s := range skipped {
			logf(cfg.Log, "gallery program left out: %s", s)
		}
		text := fmt.Sprintf("gallery (%s): %d programs recorded on the peer and measured", cfg.Gallery, len(gallery))
		if len(skipped) > 0 {
			text += fmt.Sprintf("; %d left out:\n  %s", len(skipped), strings.Join(skipped, "\n  "))
		}
		rep.note("gallery", text)
		workloads = append(workloads, gallery...)
	}
	bin, err := hosttest.Binary()
	if err != nil {
		return nil, err
	}
	logf(cfg.Log, "sidecar: %s", bin)

	var pr *peer
	if cfg.Peer {
		logf(cfg.Log, "starting the peer…")
		var reason string
		pr, reason = startPeer(cfg, workloads)
		if pr == nil {
			rep.PeerSkipped = reason
			logf(cfg.Log, "peer column skipped: %s", reason)
		} else {
			rep.PeerInfo = pr.info
			defer pr.close()
		}
	} else {
		rep.PeerSkipped = "disabled"
	}

	o, err := newOurs(workloads, cfg.ColdSteps, cfg.ColdChecks)
	if err != nil {
		return nil, err
	}
	defer o.close()
	rep.Crossings = o.crossings
	if !o.batch {
		rep.NoBatch = "the sidecar does not list batch_calls in ping's features"
		logf(cfg.Log, "batch-mode rows skipped: %s", rep.NoBatch)
	}
	var order []string
	for _, x := range o.crossings {
		if x.OrderNote != "" {
			order = append(order, x.Name+": "+x.OrderNote)
		}
	}
	if len(order) > 0 {
		rep.note("order", fmt.Sprintf("%d programs make their calls in another order than recorded (one mode):\n  %s", len(order), strings.Join(order, "\n  ")))
	}

	for round := 0; round < cfg.Rounds; round++ {
		logf(cfg.Log, "round %d/%d", round+1, cfg.Rounds)
		oursFirst := round%2 == 0
		for turn := 0; turn < 2; turn++ {
			if (turn == 0) == oursFirst {
				if err := o.round(rep, cfg, round); err != nil {
					return nil, err
				}
				continue
			}
			if pr == nil {
				continue
			}
			if err := pr.round(rep, cfg, round, workloads); err != nil {
				rep.PeerSkipped = err.Error()
				logf(cfg.Log, "peer column skipped: %v", err)
				pr.close()
				pr = nil
				rep.peer = nil
			}
		}
	}
	for _, x := range rep.Rows {
		if x.PeerKey != "" {
			x.Peer = rep.peer[x.PeerKey]
		}
		// The peer produces no snapshot bytes unless asked: its figure
		// for a delta-delivery row is its cached run.
		if name, ok := strings.CutPrefix(x.PeerKey, workloadDeltaKey); ok {
			x.Peer = rep.peer[workloadCachedKey+name]
		}
		// Nor does it batch calls: it has no pipe to cross.
		if name, ok := strings.CutPrefix(x.PeerKey, workloadBatchKey); ok {
			x.Peer = rep.peer[workloadCachedKey+name]
		}
	}
	rep.LoadAfter = loadAverage()
	return rep, nil
}

// ours holds the long-lived sidecars of the "warm host" measurements and
// the snapshots cold resumes start from.
type ours struct {
	workloads []*Workload
	bin, jl   *host
	programs  map[string]string // workload name → cached program_id
	coldID    string            // program_id of coldSource
	cold      []coldSnapshot

	large, structured, awaited largeProgram
	huge                       answerSet

	batch     bool       // the sidecar has batched host calls (ping lists batch_calls)
	crossings []Crossing // per workload, from the checks before timing
}

type coldSnapshot struct {
	step  int
	id    string
	bytes []byte
}

func newOurs(workloads []*Workload, steps []int, coldChecks int) (*ours, error) {
	o := &ours{workloads: workloads, programs: map[string]string{}}
	var err error
	if o.bin, err = newHost(false); err != nil {
		return nil, err
	}
	if o.jl, err = newHost(true); err != nil {
		o.bin.close()
		return nil, err
	}
	if o.batch, err = hasFeature(o.bin, "batch_calls"); err != nil {
		o.close()
		return nil, err
	}
	for i, w := range workloads {
		r, _, err := o.bin.call(compileRequest(o.bin.nextID(), w.Source), nil)
		if err != nil {
			o.close()
			return nil, fmt.Errorf("compile %s: %w", w.Name, err)
		}
		o.programs[w.Name] = r.Result.ProgramID
		// One untimed run checks the workload and warms the process.
		if _, err := o.workload(w, 1, r.Result.ProgramID); err != nil {
			o.close()
			return nil, err
		}
		// Each mode, hot and cold (every resume in a new process), must
		// complete with the expected value.
		fresh := freshProcess
		if coldChecks > 0 && i >= coldChecks {
			fresh = nil
		}
		x, err := w.verifyModes(o.bin, fresh, r.Result.ProgramID, o.batch)
		if err != nil {
			o.close()
			return nil, err
		}
		o.crossings = append(o.crossings, x)
	}
	r, _, err := o.bin.call(compileRequest(o.bin.nextID(), coldSource), nil)
	if err != nil {
		o.close()
		return nil, err
	}
	o.coldID = r.Result.ProgramID
	o.large = largeProgram{label: largeLabel, key: "large", source: largeSource}
	o.large.answers.payloads, o.large.answers.bytes = textPayloads(LargeAnswers())
	o.structured = largeProgram{label: structuredLabel, key: "structured", source: structuredSource}
	o.structured.answers.payloads, o.structured.answers.bytes = recordPayloads(StructuredAnswers())
	o.awaited = largeProgram{label: awaitedLabel, key: "awaited", source: awaitedSource, answers: o.large.answers}
	o.huge.payloads, o.huge.bytes = textPayloads(HugeAnswers())
	if o.cold, err = prepareCold(o.bin, o.coldID, steps); err != nil {
		o.close()
		return nil, err
	}
	return o, nil
}

func (o *ours) close() {
	if o.bin != nil {
		o.bin.close()
	}
	if o.jl != nil {
		o.jl.close()
	}
}

func (o *ours) round(rep *Report, cfg Config, round int) error {
	n := share(cfg.Hot, round, cfg.Rounds)
	if d, err := pipeFloor(n); err == nil {
		r := rep.row("pipe floor: 600 B echoed by cat (no sidecar)", "")
		r.Ours = append(r.Ours, d...)
	}
	d, err := pings(o.bin, n)
	if err != nil {
		return err
	}
	r := rep.row("ping round trip, binary frames", "")
	r.Ours = append(r.Ours, d...)
	for _, pass := range []struct {
		h              *host
		name, delivery string
	}{
		{o.bin, "hot round trip, binary frames", ""},
		{o.jl, "hot round trip, JSONL", ""},
		{o.bin, "hot round trip, binary frames, delta delivery", wire.DeliveryDelta}, // what a fast host asks for
	} {
		d, err := hotRoundTrips(pass.h, n, cfg.HotChain, pass.delivery)
		if err != nil {
			return err
		}
		r := rep.row(pass.name, "hot")
		r.Ours = append(r.Ours, d...)
	}
	for _, step := range cfg.HistorySteps {
		for _, delivery := range []string{"", wire.DeliveryDelta} {
			d, err := historyRoundTrips(o.bin, o.coldID, step, share(cfg.History, round, cfg.Rounds), delivery)
			if err != nil {
				return err
			}
			name := fmt.Sprintf("hot round trip, binary frames, 1 KiB args, from step %d", step)
			if delivery != "" {
				name += ", delta delivery"
			}
			r := rep.row(name, "history/"+strconv.Itoa(step))
			r.Ours = append(r.Ours, d...)
		}
	}
	for _, w := range o.workloads {
		d, err := compiles(o.bin, w, share(cfg.Compile, round, cfg.Rounds))
		if err != nil {
			return err
		}
		r := rep.row("compile "+w.Name+", warm process", "compile/"+w.Name)
		r.Ours = append(r.Ours, d...)
	}
	fresh := startWorkload(o.workloads)
	compile, first, tenth, err := coldStarts(fresh, share(cfg.ColdStart, round, cfg.Rounds), 0)
	if err != nil {
		return err
	}
	r = rep.row("cold start: spawn → first compile answered", "")
	r.Ours = append(r.Ours, compile...)
	r = rep.row("fresh process: first start ("+fresh.Name+", to its first call)", "")
	r.Ours = append(r.Ours, first...)
	r = rep.row("fresh process: tenth start (same)", "")
	r.Ours = append(r.Ours, tenth...)
	// The same after the host has been idle: the first start otherwise
	// follows the compile at once and the tenth the ninth, which keeps
	// the second warm in ways the first cannot be.
	_, first, tenth, err = coldStarts(fresh, share(cfg.ColdStart, round, cfg.Rounds), idleBeforeStart)
	if err != nil {
		return err
	}
	r = rep.row(idleFirstRow, "")
	r.Ours = append(r.Ours, first...)
	r = rep.row(idleTenthRow, "")
	r.Ours = append(r.Ours, tenth...)
	for _, w := range o.workloads {
		n := share(cfg.Workload, round, cfg.Rounds)
		d, err := o.workload(w, n, "")
		if err != nil {
			return err
		}
		r := rep.row(fmt.Sprintf("%s end to end (%d calls): compile+start+resumes", w.Name, len(w.Calls)), workloadKey+w.Name)
		r.Group = w.Group
		r.Ours = append(r.Ours, d...)
		if d, err = o.workload(w, n, o.programs[w.Name]); err != nil {
			return err
		}
		r = rep.row(fmt.Sprintf("%s end to end, program cached: start+resumes", w.Name), workloadCachedKey+w.Name)
		r.Group = w.Group
		r.Ours = append(r.Ours, d...)
		if d, err = o.workloadDelivery(w, n, o.programs[w.Name], wire.DeliveryDelta); err != nil {
			return err
		}
		r = rep.row(fmt.Sprintf("%s end to end, program cached, delta delivery", w.Name), workloadDeltaKey+w.Name)
		r.Group = w.Group
		r.Ours = append(r.Ours, d...)
		if !o.batch {
			continue
		}
		if d, err = o.workloadBatch(w, n, o.programs[w.Name]); err != nil {
			return err
		}
		r = rep.row(fmt.Sprintf("%s end to end, program cached, batch calls", w.Name), workloadBatchKey+w.Name)
		r.Group = w.Group
		r.Ours = append(r.Ours, d...)
	}
	for _, p := range []largeProgram{o.large, o.structured, o.awaited} {
		if err := o.largeRound(rep, p, share(cfg.Large, round, cfg.Rounds)); err != nil {
			return err
		}
	}
	if err := o.hugeRound(rep, share(cfg.Large, round, cfg.Rounds)); err != nil {
		return err
	}
	for _, c := range o.cold {
		// As for the large rows' cold resume: the serving sidecar has
		// finished what the rows before left it when a fresh one is
		// timed beside it.
		if err := awaitIdle(o.bin.sc.Pid()); err != nil {
			return err
		}
		total, req, err := coldResumes(c, share(cfg.ColdResume, round, cfg.Rounds))
		if err != nil {
			return err
		}
		r := rep.row(fmt.Sprintf("cold resume at step %d: spawn → answered", c.step), "")
		r.Ours = append(r.Ours, total...)
		r = rep.row(fmt.Sprintf("cold resume at step %d: request in fresh process", c.step), "cold/"+strconv.Itoa(c.step))
		r.Ours = append(r.Ours, req...)
	}
	return nil
}

// startWorkload is the workload the fresh-process rows compile and start:
// triage, so those rows stay comparable as workloads are added.
func startWorkload(ws []*Workload) *Workload {
	for _, w := range ws {
		if w.Name == "triage" {
			return w
		}
	}
	return ws[0]
}

// hotRoundTrips times resume request written → response read, on a
// parked execution, restarting the execution every chain suspensions so
// the snapshot (sent back in full with every suspension) stays small.
func hotRoundTrips(h *host, n, chain int, delivery string) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	var programID string
	if n > 0 {
		r, _, err := h.call(compileRequest(h.nextID(), hotSource), nil)
		if err != nil {
			return nil, err
		}
		programID = r.Result.ProgramID
	}
	var req []byte
	for len(out) < n {
		r, _, err := h.call(startRequest(h.nextID(), programID, noInputs, capJSON), nil)
		if err != nil {
			return nil, err
		}
		sid, pid := r.Result.SnapshotID, r.Result.PolicyID
		for s := 0; s < chain && len(out) < n; s++ {
			req = withDelivery(resumeRequest(req[:0], h.nextID(), sid, pid, oneValue), delivery)
			t0 := time.Now()
			hdr, _, err := h.roundTrip(req, nil)
			d := time.Since(t0)
			if err != nil {
				return nil, err
			}
			var ok bool
			if sid, ok = snapshotIDOf(hdr); !ok {
				return nil, fmt.Errorf("hot resume: unexpected response %.300s", hdr)
			}
			out = append(out, d)
		}
		// Ending the execution frees its parked goroutine.
		if _, _, err := h.roundTrip(resumeRequest(req[:0], h.nextID(), sid, pid, cancelled), nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pipeFloor times a 600-byte message (a typical hot resume request)
// echoed by cat: the IPC cost no sidecar can avoid.
func pipeFloor(n int) ([]time.Duration, error) {
	cmd := exec.Command("cat")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	msg, buf := bytes.Repeat([]byte{'x'}, 600), make([]byte, 600)
	d := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := in.Write(msg); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(out, buf); err != nil {
			return nil, err
		}
		d = append(d, time.Since(t0))
	}
	return d, nil
}

// pings times n ping requests: the sidecar's cheapest round trip, to set
// beside the pipe floor.
func pings(h *host, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		hdr, _, err := h.roundTrip(pingRequest, nil)
		d := time.Since(t0)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(hdr, []byte(`"`+wire.FieldOK+`":true`)) {
			return nil, fmt.Errorf("ping: %.300s", hdr)
		}
		out = append(out, d)
	}
	return out, nil
}

// historyRoundTrips times n hot round trips of the cold program (~1 KiB
// of arguments per call) from suspension step on.
func historyRoundTrips(h *host, programID string, step, n int, delivery string) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	if n == 0 {
		return out, nil
	}
	r, _, err := h.call(startRequest(h.nextID(), programID, coldInputs, capJSON), nil)
	if err != nil {
		return nil, err
	}
	sid, pid := r.Result.SnapshotID, r.Result.PolicyID
	var req []byte
	for s := 1; len(out) < n; s++ {
		req = withDelivery(resumeRequest(req[:0], h.nextID(), sid, pid, coldAnswer(s)), delivery)
		t0 := time.Now()
		hdr, _, err := h.roundTrip(req, nil)
		d := time.Since(t0)
		if err != nil {
			return nil, err
		}
		var ok bool
		if sid, ok = snapshotIDOf(hdr); !ok {
			return nil, fmt.Errorf("hot resume at step %d: unexpected response %.300s", s, hdr)
		}
		if s >= step {
			out = append(out, d)
		}
	}
	_, _, err = h.roundTrip(resumeRequest(req[:0], h.nextID(), sid, pid, cancelled), nil)
	return out, err
}

// compiles times compile requests of a workload on a warm process.
func compiles(h *host, w *Workload, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		req := compileRequest(h.nextID(), w.Source)
		t0 := time.Now()
		hdr, _, err := h.roundTrip(req, nil)
		d := time.Since(t0)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(hdr, []byte(`"`+wire.FieldOK+`":true`)) {
			return nil, fmt.Errorf("compile %s: %.300s", w.Name, hdr)
		}
		out = append(out, d)
	}
	return out, nil
}

// idleBeforeStart is how long the host waits before the first and the
// tenth start in the idle variant of the fresh-process rows.
const idleBeforeStart = 20 * time.Millisecond

const (
	idleFirstRow = "fresh process, 20 ms idle before each: first start"
	idleTenthRow = "fresh process, 20 ms idle before each: tenth start"
)

// coldStarts spawns n processes and times spawn → first compile answered
// of w's source; in each it then times the first and the tenth start of
// the compiled program (request → first suspension), each start cancelled
// after it suspends. With idle, the host waits that long before the first
// and before the tenth start.
func coldStarts(w *Workload, n int, idle time.Duration) (compile, first, tenth []time.Duration, err error) {
	req := compileRequest(1, w.Source)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		sc, err := hosttest.Start()
		if err != nil {
			return nil, nil, nil, err
		}
		h := &host{sc: sc, id: 1}
		err = func() error {
			defer sc.Wait()
			if err := sc.SendRaw(req, nil); err != nil {
				return err
			}
			hdr, _, err := sc.RecvRaw()
			compile = append(compile, time.Since(t0))
			if err != nil {
				return err
			}
			r, err := parseResponse(hdr)
			if err != nil {
				return fmt.Errorf("cold start compile: %w", err)
			}
			start := startRequest(0, r.Result.ProgramID, w.inputs, mustJSONText(w.Capabilities))
			var buf []byte
			for k := 1; k <= 10; k++ {
				if idle > 0 && (k == 1 || k == 10) {
					time.Sleep(idle)
				}
				t1 := time.Now()
				r, _, err := h.call(start, nil)
				d := time.Since(t1)
				if err != nil {
					return fmt.Errorf("start %d in a fresh process: %w", k, err)
				}
				switch k {
				case 1:
					first = append(first, d)
				case 10:
					tenth = append(tenth, d)
				}
				if _, _, err := h.roundTrip(resumeRequest(buf[:0], h.nextID(), r.Result.SnapshotID, r.Result.PolicyID, cancelled), nil); err != nil {
					return err
				}
			}
			return nil
		}()
		if err != nil {
			return nil, nil, nil, err
		}
	}
	return compile, first, tenth, nil
}

// workload runs w end to end n times and times each run: compile (unless
// programID is a cached program), start, and one resume per capability
// call, including the host's own work: decoding responses, looking up
// answers, building and signing requests. Every result is checked against the fixture.
func (o *ours) workload(w *Workload, n int, programID string) ([]time.Duration, error) {
	return o.workloadDelivery(w, n, programID, "")
}

// workloadDelivery is workload with a snapshot_delivery ("" for the
// default, full). With "delta" the host keeps each execution's snapshot
// bytes by appending what every step returns, as a host that persists
// them would.
func (o *ours) workloadDelivery(w *Workload, n int, programID, delivery string) ([]time.Duration, error) {
	h := o.bin
	out := make([]time.Duration, 0, n)
	caps := mustJSONText(w.Capabilities)
	var req, snap []byte
	for i := 0; i < n; i++ {
		t0 := time.Now()
		pid := programID
		if pid == "" {
			r, _, err := h.call(compileRequest(h.nextID(), w.Source), nil)
			if err != nil {
				return nil, fmt.Errorf("%s: compile: %w", w.Name, err)
			}
			pid = r.Result.ProgramID
		}
		r, bytesOut, err := h.call(withDelivery(startRequest(h.nextID(), pid, w.inputs, caps), delivery), nil)
		if err != nil {
			return nil, fmt.Errorf("%s: start: %w", w.Name, err)
		}
		snap = append(snap[:0], bytesOut...)
		calls := 0
		for r.Result.Step.Type == wire.StepSuspended {
			payload, err := w.answer(r.Result.Step.Capability, r.Result.Step.Args)
			if err != nil {
				return nil, err
			}
			req = withDelivery(resumeRequest(req[:0], h.nextID(), r.Result.SnapshotID, r.Result.PolicyID, payload), delivery)
			calls++
			if r, bytesOut, err = h.call(req, nil); err != nil {
				return nil, fmt.Errorf("%s: resume %d: %w", w.Name, calls, err)
			}
			if delivery == wire.DeliveryDelta {
				snap = append(snap, bytesOut...)
			}
		}
		d := time.Since(t0)
		if calls != len(w.Calls) {
			return nil, fmt.Errorf("%s: completed after %d of %d calls", w.Name, calls, len(w.Calls))
		}
		got, err := canonical(r.Result.Step.Value)
		if err != nil || !bytes.Equal(got, w.expected) {
			return nil, fmt.Errorf("%s: result %s, want %s (%v)", w.Name, got, w.expected, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// workloadBatch is workload with the program cached, in batch mode
// (host_calls "batch"): each suspended step lists every outstanding call,
// and the host answers them all in one resume, each from the fixture's
// call with the same capability and arguments not answered yet.
func (o *ours) workloadBatch(w *Workload, n int, programID string) ([]time.Duration, error) {
	h := o.bin
	out := make([]time.Duration, 0, n)
	caps := mustJSONText(w.Capabilities)
	m := newMatcher(w)
	var req []byte
	var calls []hostCall
	var payloads [][]byte
	for i := 0; i < n; i++ {
		m.reset()
		t0 := time.Now()
		r, _, err := h.call(startRequestMode(h.nextID(), programID, w.inputs, caps, true), nil)
		if err != nil {
			return nil, fmt.Errorf("%s: start: %w", w.Name, err)
		}
		resumes := 0
		for r.Result.Step.Type == wire.StepSuspended {
			if calls, err = parseCalls(calls[:0], r.Result.Step.Calls); err != nil {
				return nil, fmt.Errorf("%s: %w", w.Name, err)
			}
			payloads = payloads[:0]
			for _, c := range calls {
				p, err := m.match(c.capability, c.args)
				if err != nil {
					return nil, err
				}
				payloads = append(payloads, p)
			}
			req = batchResumeRequest(req[:0], h.nextID(), r.Result.SnapshotID, r.Result.PolicyID, calls, payloads)
			resumes++
			if r, _, err = h.call(req, nil); err != nil {
				return nil, fmt.Errorf("%s: batch resume %d: %w", w.Name, resumes, err)
			}
		}
		d := time.Since(t0)
		if len(m.order) != len(w.Calls) {
			return nil, fmt.Errorf("%s: batch mode completed after %d of %d calls", w.Name, len(m.order), len(w.Calls))
		}
		got, err := canonical(r.Result.Step.Value)
		if err != nil || !bytes.Equal(got, w.expected) {
			return nil, fmt.Errorf("%s: batch mode result %s, want %s (%v)", w.Name, got, w.expected, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// hasFeature asks the sidecar whether ping lists a feature.
func hasFeature(h *host, feature string) (bool, error) {
	hdr, _, err := h.roundTrip(pingRequest, nil)
	if err != nil {
		return false, err
	}
	var pong struct {
		OK     bool `json:"ok"`
		Result struct {
			Features []string `json:"features"`
		} `json:"result"`
	}
	if err := json.Unmarshal(hdr, &pong); err != nil || !pong.OK {
		return false, fmt.Errorf("ping: %.300s", hdr)
	}
	return slices.Contains(pong.Result.Features, feature), nil
}

// prepareCold runs the cold program hot and keeps the snapshots taken at
// the given suspension numbers.
func prepareCold(h *host, programID string, steps []int) ([]coldSnapshot, error) {
	last := 0
	for _, s := range steps {
		if s < 1 {
			return nil, fmt.Errorf("cold step %d: steps count from 1", s)
		}
		last = max(last, s)
	}
	if last == 0 {
		return nil, nil
	}
	r, pl, err := h.call(startRequest(h.nextID(), programID, coldInputs, capJSON), nil)
	if err != nil {
		return nil, err
	}
	byStep := map[int]coldSnapshot{}
	for step := 1; ; step++ {
		byStep[step] = coldSnapshot{step: step, id: r.Result.SnapshotID, bytes: pl}
		if step == last {
			break
		}
		if r, pl, err = h.call(resumeRequest(nil, h.nextID(), r.Result.SnapshotID, r.Result.PolicyID, coldAnswer(step)), nil); err != nil {
			return nil, err
		}
	}
	var out []coldSnapshot
	for _, s := range steps {
		out = append(out, byStep[s])
	}
	return out, nil
}

// coldResumes resumes snapshot c from its bytes in a new process each
// time. total runs from spawning the process to the resume's answer;
// request from writing the resume to its answer, after a throwaway
// request has shown the process is serving.
func coldResumes(c coldSnapshot, n int) (total, request []time.Duration, err error) {
	// Framed once, before any clock starts: the driver's copy is not the
	// resume's work.
	req := frame.Append(nil, rawResumeRequest(1, c.id, []string{"cap"}, coldAnswer(c.step)), c.bytes)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		sc, err := hosttest.Start()
		if err != nil {
			return nil, nil, err
		}
		hdr, err := func() ([]byte, error) {
			defer sc.Wait()
			if err := sc.SendRaw(pingRequest, nil); err != nil {
				return nil, err
			}
			if _, _, err := sc.RecvRaw(); err != nil {
				return nil, err
			}
			t1 := time.Now()
			if err := sc.WriteBytes(req); err != nil {
				return nil, err
			}
			hdr, _, err := sc.RecvRaw()
			t2 := time.Now()
			total = append(total, t2.Sub(t0))
			request = append(request, t2.Sub(t1))
			return hdr, err
		}()
		if err != nil {
			return nil, nil, err
		}
		if err := checkColdStep(hdr, c.step); err != nil {
			return nil, nil, err
		}
	}
	return total, request, nil
}

// checkColdStep checks a cold resume of suspension step reached the next
// call, whose argument has i == step.
func checkColdStep(hdr []byte, step int) error {
	r, err := parseResponse(hdr)
	if err != nil {
		return fmt.Errorf("cold resume at step %d: %w", step, err)
	}
	args, err := value.ParseJSON([]byte(`{"Array":` + string(r.Result.Step.Args) + `}`))
	if err == nil && len(args.Elems) == 1 && len(args.Elems[0].Members) > 0 {
		if m := args.Elems[0].Members[0]; m.Key == "i" && m.Value.Num == float64(step) {
			return nil
		}
	}
	return fmt.Errorf("cold resume at step %d: unexpected step %.300s", step, hdr)
}

// withDelivery adds a snapshot_delivery to a request; "" leaves it as is
// (full delivery).
func withDelivery(req []byte, delivery string) []byte {
	if delivery == "" {
		return req
	}
	return append(append(append(req[:len(req)-1], `,"`+wire.FieldSnapshotDelivery+`":"`...), delivery...), `"}`...)
}

// sidecarEnv lists the Go runtime settings in the environment, which every
// sidecar the driver spawns inherits.
func sidecarEnv() string {
	var out []string
	for _, k := range []string{"GOMAXPROCS", "GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(k); ok {
			out = append(out, k+"="+v)
		}
	}
	return strings.Join(out, " ")
}
