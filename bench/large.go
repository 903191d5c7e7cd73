package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/sampletext"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// The large-answers program: 40 capability calls, each answered with ~50 KB
// of pseudo-random JSON-like text (a web page, a query result), of which
// the guest keeps only the length. Its journal holds every answer, so this
// is where snapshot size and delta delivery show. bench/peer/peer.js runs
// the same program on the same answers.
const (
	largeSource      = "let total = 0;\nfor (let i = 0; i < 40; i++) { const r = fetch_page(i); total += r.length; }\ntotal;"
	largeCalls       = 40
	largeAnswerBytes = 50_000
	// largeWindow is how many round trips at each end are compared.
	largeWindow = 5
	// stageChunk keeps every stage request under the 1 MiB frame limit.
	stageChunk = 900 << 10

	// The 1 MB answers program: six calls, each answered with ~880 KB of
	// the same kind of text, about the largest whose JSON escaping still
	// fits a request. Five round trips are timed per run (the sixth
	// completes).
	hugeSource      = "let total = 0;\nfor (let i = 0; i < 6; i++) { const r = fetch_page(i); total += r.length; }\ntotal;"
	hugeCalls       = 6
	hugeAnswerBytes = 880_000

	// The structured answers program: the same 40 calls, each answered
	// with a query result of ~50 KB as JSON (sampletext.Records, about 450
	// records), which the guest gets as objects and arrays of its own and
	// reaches into.
	structuredSource = "let total = 0;\nfor (let i = 0; i < 40; i++) { const r = fetch_page(i); total += r.items.length; }\ntotal;"

	// The awaited answers program: the 40 × 50 KB program as code mode
	// writes it, each call awaited. It suspends at rest (its script
	// returned, its promise reactions waiting), where checkpoints do not
	// reach yet (docs/heap-image.md, item 4): its snapshots keep the
	// journal of every answer.
	awaitedSource = "let total = 0;\nfor (let i = 0; i < 40; i++) { const r = await fetch_page(i); total += r.length; }\ntotal;"
)

// HugeAnswers returns the six ~880 KB answers, the same on every run.
func HugeAnswers() []string { return sampleAnswers(rand.NewPCG(6, 880), hugeCalls, hugeAnswerBytes) }

// LargeAnswers returns the 40 answers, the same on every run.
func LargeAnswers() []string { return sampleAnswers(rand.NewPCG(40, 50), largeCalls, largeAnswerBytes) }

// StructuredAnswers returns the 40 query results of the structured
// answers program, the same on every run.
func StructuredAnswers() []map[string]any {
	r := rand.New(rand.NewPCG(40, 51))
	out := make([]map[string]any, largeCalls)
	for i := range out {
		out[i] = sampletext.Records(r, largeAnswerBytes)
	}
	return out
}

// textPayloads returns the resume payloads answering with each text, and
// the texts' bytes.
func textPayloads(answers []string) ([][]byte, int) {
	payloads, n := make([][]byte, len(answers)), 0
	for i, a := range answers {
		payloads[i] = mustJSONText(map[string]any{wire.FieldType: wire.PayloadValue, wire.FieldValue: map[string]any{"String": a}})
		n += len(a)
	}
	return payloads, n
}

// recordPayloads returns the resume payloads answering with each query
// result, and the results' bytes as compact JSON (what the tool returned).
func recordPayloads(answers []map[string]any) ([][]byte, int) {
	payloads, n := make([][]byte, len(answers)), 0
	for i, a := range answers {
		v, err := value.FromGo(a)
		if err != nil {
			panic(err) // Records makes only values that cross
		}
		payloads[i] = mustJSONText(map[string]any{wire.FieldType: wire.PayloadValue, wire.FieldValue: json.RawMessage(v.AppendJSON(nil))})
		n += len(mustJSONText(a))
	}
	return payloads, n
}

// sampleAnswers returns n answers of about size bytes of JSON-like text
// drawn from src.
func sampleAnswers(src rand.Source, n, size int) []string {
	r := rand.New(src)
	out := make([]string, n)
	for i := range out {
		out[i] = sampletext.JSONLike(r, size)
	}
	return out
}

// largeRun is one run of the large-answers program.
type largeRun struct {
	roundTrips  []time.Duration // resume request written → response read, per call
	final       []byte          // the last snapshot, rebuilt from the deltas
	finalID     string
	value       string // the completed value, as sent
	answerBytes int
}

// largeHost runs the large-answers program over binary frames with delta
// delivery, as a host that keeps snapshots would: it rebuilds each
// snapshot from base + delta and checks the id.
func largeHost(h *host, programID string, payloads [][]byte, answerBytes int) (*largeRun, error) {
	run := &largeRun{answerBytes: answerBytes}
	req := startRequest(h.nextID(), programID, noInputs, []byte(`["fetch_page"]`))
	req = append(req[:len(req)-1], `,"`+wire.FieldSnapshotDelivery+`":"`+wire.DeliveryDelta+`"}`...)
	hdr, delta, err := h.roundTrip(req, nil)
	if err != nil {
		return nil, err
	}
	snap := bytes.Clone(delta)
	var buf []byte
	for i := 0; ; i++ {
		r, err := parseResponse(hdr)
		if err != nil {
			return nil, fmt.Errorf("large answers, step %d: %w", i, err)
		}
		if r.Result.Step.Type == wire.StepCompleted {
			if i != len(payloads) {
				return nil, fmt.Errorf("large answers: completed after %d calls", i)
			}
			run.value = string(r.Result.Step.Value)
			return run, nil
		}
		if i > 0 {
			// A delta extends the snapshot resumed; a snapshot that
			// does not (a checkpoint) comes whole.
			switch r.Result.SnapshotBaseID {
			case "":
				snap = bytes.Clone(delta)
			case run.finalID:
				snap = append(bytes.Clone(snap), delta...)
			default:
				return nil, fmt.Errorf("large answers, step %d: a delta of another snapshot", i)
			}
		}
		sum := sha256.Sum256(snap)
		if hex.EncodeToString(sum[:]) != r.Result.SnapshotID {
			return nil, fmt.Errorf("large answers, step %d: base + delta do not hash to snapshot_id", i)
		}
		run.final, run.finalID = snap, r.Result.SnapshotID
		buf = resumeRequest(buf[:0], h.nextID(), r.Result.SnapshotID, r.Result.PolicyID, payloads[i])
		buf = append(buf[:len(buf)-1], `,"`+wire.FieldSnapshotDelivery+`":"`+wire.DeliveryDelta+`"}`...)
		t0 := time.Now()
		hdr, delta, err = h.roundTrip(buf, nil)
		run.roundTrips = append(run.roundTrips, time.Since(t0))
		if err != nil {
			return nil, err
		}
	}
}

// largeCold resumes the last suspension of a run in a fresh process from
// staged chunks, and returns the time from the first stage request to the
// resume's answer, and the value it completed with.
func largeCold(run *largeRun, lastPayload []byte) (time.Duration, string, error) {
	sc, err := hosttest.Start()
	if err != nil {
		return 0, "", err
	}
	defer sc.Wait()
	if err := sc.SendRaw(pingRequest, nil); err != nil { // the process is serving
		return 0, "", err
	}
	if _, _, err := sc.RecvRaw(); err != nil {
		return 0, "", err
	}
	return largeStagedResume(sc, run, lastPayload)
}

// largeStagedResume uploads the run's last snapshot to sc with stage
// requests and resumes it from the stage, as largeCold times it.
func largeStagedResume(sc *hosttest.Sidecar, run *largeRun, lastPayload []byte) (time.Duration, string, error) {
	// The requests are made and framed before the clock starts, as the
	// round trips' are (their buffers are kept from step to step):
	// encoding/json takes 0.4-1.1 ms to check and compact a 50 KB
	// payload, and framing it in a new buffer 0.2-0.5 ms of the driver's
	// page faults, which is the driver's work, not the resume's.
	req, _ := json.Marshal(map[string]any{
		wire.FieldProtocolVersion: wire.ProtocolVersion, wire.FieldID: 1, wire.FieldMethod: wire.MethodResume, wire.FieldStageID: "large",
		wire.FieldPolicy:  hosttest.Policy(benchKey, run.finalID, []string{"fetch_page"}, map[string]any{}),
		wire.FieldPayload: json.RawMessage(lastPayload),
	})
	var stages [][]byte
	for off := 0; off < len(run.final); off += stageChunk {
		end := min(off+stageChunk, len(run.final))
		hdr := []byte(requestPrefix + strconv.Itoa(2+off) + `,"` + wire.FieldMethod + `":"` + wire.MethodStage + `","` + wire.FieldStageID + `":"large","` + wire.FieldOffset + `":` + strconv.Itoa(off) + `}`)
		stages = append(stages, frame.Append(nil, hdr, run.final[off:end]))
	}
	resume := frame.Append(nil, req, nil)
	t0 := time.Now()
	for _, st := range stages {
		if err := sc.WriteBytes(st); err != nil {
			return 0, "", err
		}
		hdr, _, err := sc.RecvRaw()
		if err != nil {
			return 0, "", err
		}
		if !bytes.Contains(hdr, []byte(`"`+wire.FieldOK+`":true`)) {
			return 0, "", fmt.Errorf("stage failed: %.300s", hdr)
		}
	}
	if err := sc.WriteBytes(resume); err != nil {
		return 0, "", err
	}
	hdr, _, err := sc.RecvRaw()
	d := time.Since(t0)
	if err != nil {
		return 0, "", err
	}
	r, err := parseResponse(hdr)
	if err != nil {
		return 0, "", fmt.Errorf("cold resume via stage: %w", err)
	}
	return d, string(r.Result.Step.Value), nil
}

// answerSet is a program's answers as resume payloads.
type answerSet struct {
	payloads [][]byte
	bytes    int // the answers' own bytes
}

// largeProgram is a program of 40 large answers and its rows.
type largeProgram struct {
	label   string // starts each row's name
	key     string // the peer's samples: key+"/first", "/last", "/cold"
	source  string
	answers answerSet
}

// The rows of a largeProgram.
const (
	firstSuffix = ", delta delivery: round trips 1–5"
	lastSuffix  = ", delta delivery: round trips 35–39"
	coldSuffix  = ": cold resume of the last suspension, staged upload + resume"
	warmSuffix  = ": the same replayed by the serving process"
	freshSuffix = ": the same cold resume, the peer in a fresh Node process too"

	largeLabel      = "40 × 50 KB answers"
	structuredLabel = "40 × 50 KB structured answers"
	awaitedLabel    = "40 × 50 KB answers, awaited"
	largeFirstRow   = largeLabel + firstSuffix
	largeLastRow    = largeLabel + lastSuffix
	largeColdRow    = largeLabel + coldSuffix
	largeWarmRow    = largeLabel + warmSuffix
)

// largeRound measures n runs of p and one cold resume per run, into rep.
func (o *ours) largeRound(rep *Report, p largeProgram, n int) error {
	last := p.answers.payloads[largeCalls-1]
	for range n {
		// The rows before this one park and journal enough to push the
		// program out of the session's caches, as any host may see: it is
		// compiled again (the same program_id) when it is not there.
		r, _, err := o.bin.call(compileRequest(o.bin.nextID(), p.source), nil)
		if err != nil {
			return err
		}
		run, err := largeHost(o.bin, r.Result.ProgramID, p.answers.payloads, p.answers.bytes)
		if err != nil {
			return fmt.Errorf("%s: %w", p.label, err)
		}
		// The serving sidecar finishes what the run left it (a realm
		// made for the next start, a collection) before the fresh one is
		// timed: on two CPUs it would otherwise share them with it.
		if err := awaitIdle(o.bin.sc.Pid()); err != nil {
			return err
		}
		cold, value, err := largeCold(run, last)
		if err != nil {
			return err
		}
		if value != run.value {
			return fmt.Errorf("%s: cold resume gave %s, the hot run %s", p.label, value, run.value)
		}
		// The same bytes resumed by the process that ran them: its
		// execution completed, so the resume replays the journal as a
		// fresh process does, in a process whose memory is already its
		// own (a fresh one first faults in every page the replay takes).
		warm, value, err := largeStagedResume(o.bin.sc, run, last)
		if err != nil {
			return err
		}
		if value != run.value {
			return fmt.Errorf("%s: replay in the serving process gave %s, the hot run %s", p.label, value, run.value)
		}
		rts := run.roundTrips[:largeCalls-1] // the last one completes
		first := rep.row(p.label+firstSuffix, p.key+"/first")
		first.Ours = append(first.Ours, rts[:largeWindow]...)
		lastRow := rep.row(p.label+lastSuffix, p.key+"/last")
		lastRow.Ours = append(lastRow.Ours, rts[len(rts)-largeWindow:]...)
		c := rep.row(p.label+coldSuffix, p.key+"/cold")
		c.Ours = append(c.Ours, cold)
		wr := rep.row(p.label+warmSuffix, p.key+"/cold")
		wr.Ours = append(wr.Ours, warm)
		// Like for like: the reference's cold resume in a process of its
		// own as well (peer.freshResumes), beside the same fresh-process
		// figure of ours.
		fr := rep.row(p.label+freshSuffix, p.key+"/fresh")
		fr.Ours = append(fr.Ours, cold)
		rep.note(p.key+"/ours", fmt.Sprintf("%s, ours: final snapshot %d bytes for %d answer bytes (%.0f%%); cold resume via stage gives the hot run's value %s",
			p.label, len(run.final), run.answerBytes, 100*float64(len(run.final))/float64(run.answerBytes), run.value))
	}
	return nil
}

// hugeRound measures n runs of the 1 MB answers program, into rep.
func (o *ours) hugeRound(rep *Report, n int) error {
	for range n {
		r, _, err := o.bin.call(compileRequest(o.bin.nextID(), hugeSource), nil)
		if err != nil {
			return err
		}
		run, err := largeHost(o.bin, r.Result.ProgramID, o.huge.payloads, o.huge.bytes)
		if err != nil {
			return fmt.Errorf("1 MB answers: %w", err)
		}
		row := rep.row(hugeRow, "huge")
		row.Ours = append(row.Ours, run.roundTrips[:hugeCalls-1]...)
		rep.note("huge/ours", fmt.Sprintf("6 × 880 KB answers, ours: final snapshot %d bytes for %d answer bytes (%.0f%%)",
			len(run.final), run.answerBytes, 100*float64(len(run.final))/float64(run.answerBytes)))
	}
	return nil
}

const hugeRow = "6 × 880 KB answers, delta delivery: round trips 1–5"
