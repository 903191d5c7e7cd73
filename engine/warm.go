package engine

import (
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// WarmProcess does, ahead of a process's first start, what that start
// would otherwise do for the first time: the runtime builds its metrics
// table on the first heap reading, and the code of everything a start runs
// (a realm's lockdown, the interpreter on async functions, promises, array
// callbacks and template literals, capability calls crossing the
// boundary both ways, a caught host error, the coroutine hand-off) is
// paged in and its tables filled. Measured over fresh processes, the
// first start cost three to four times the tenth without it.
//
// It runs a fixed program to completion on a Runtime of its own, with no
// realms prepared ahead and nothing left running. Like the realm
// pre-builder, it allocates beside whatever else runs (a few hundred KB,
// garbage once it returns).
func WarmProcess() {
	heapBytes()
	_ = warmRun()
}

// WarmResume does the same for a process's first resume from snapshot
// bytes (warmReplay), on a Runtime of its own, leaving nothing running.
func WarmResume() {
	_, _ = warmReplay()
}

// warmRun runs the warm-up program and returns its last step.
func warmRun() Step {
	p, err := Compile(warmSource)
	if err != nil {
		return Step{Err: err}
	}
	rt := NewRuntime()
	defer rt.Close()
	limits := policy.DefaultLimits()
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"get"}, Seed: 1, ClockMillis: 1,
		Inputs: []value.Member{value.M("ids", value.Array(value.Number(1), value.Number(2), value.Number(-1)))}}
	x, step := start(rt, Config{Program: p, Header: h, Limits: limits})
	for i := 0; step.Suspended() && i < 8; i++ {
		// get({ id }): read the id without assuming the shape, so that a
		// change to the program or the engine fails TestWarmUp rather
		// than panicking a sidecar at start-up.
		id := -1.0
		if len(step.Args) == 1 && len(step.Args[0].Members) == 1 {
			id = step.Args[0].Members[0].Value.Num
		}
		var out snapshot.Outcome
		if id < 0 {
			code := "NOT_FOUND"
			out.Error = &snapshot.HostError{Name: "Error", Message: "no such item", Code: &code}
		} else {
			out.Value = value.Object(value.M("id", value.Number(id)), value.M("name", value.String("n")),
				value.M("tags", value.Array(value.String("a"))), value.M("score", value.Number(id)))
		}
		x, step = x.Resume(Payload{Outcome: out}, limits)
	}
	if step.Suspended() {
		x.Abandon()
	}
	return step
}

// warmReplay does what a process's first resume from bytes would
// otherwise do for the first time: the program is loaded from its bytes
// (their decoding and canonical check), the snapshot decoded and its
// checkpoint's image read into a new realm. In a process that had not
// done it, the first such resume spent about 190 µs loading its program
// and 150 µs reading the image and running on, against 2 and 35-65 µs
// once done (a 50 KB answer's resume, 30 fresh processes). It returns
// the replay's last step and whether the snapshot it resumed was a
// checkpoint.
func warmReplay() (Step, bool) {
	p, err := Compile(warmReplaySource)
	if err != nil {
		return Step{Err: err}, false
	}
	rt := NewRuntime()
	defer rt.Close()
	limits := policy.DefaultLimits()
	h := snapshot.Header{Program: p.Bytes, Capabilities: []string{"fetch"}, Seed: 1, ClockMillis: 1}
	x, step := start(rt, Config{Program: p, Header: h, Limits: limits})
	if step.Suspended() {
		// An answer of checkpointMin bytes, of which the guest keeps its
		// length: the next suspension is written as a checkpoint.
		page := snapshot.Outcome{Value: value.String(strings.Repeat("w", checkpointMin))}
		x, step = x.Resume(Payload{Outcome: page}, limits)
	}
	if !step.Suspended() {
		return step, false
	}
	x.Abandon()
	r := Resume{Raw: step.Snapshot, Policy: policy.Policy{Capabilities: h.Capabilities, Limits: limits},
		One: Payload{Outcome: snapshot.Outcome{Value: value.String("w")}}, HasOne: true}
	if err := r.Admit(); err != nil {
		return Step{Err: err}, false
	}
	// Resume.Run's cold path, on this Runtime without the realm
	// preparer Run would start.
	cfg, err := r.replay(loadingStore{}, nil)
	if err != nil {
		return Step{Err: err}, false
	}
	x, step = start(rt, cfg)
	if step.Suspended() {
		x.Abandon()
	}
	return step, r.journal.Checkpoint != nil
}

// loadingStore loads every program from its bytes and keeps nothing.
type loadingStore struct{}

func (loadingStore) Program(_ string, b []byte) (*Program, error) { return LoadProgram(b) }
func (loadingStore) MakeRoom(policy.Limits)                       {}

// warmReplaySource keeps only the lengths of its answers.
const warmReplaySource = "let n = 0;\nfor (let i = 0; i < 2; i++) { n += fetch(i).length; }\nn;"

const warmSource = `
async function main() {
  const xs = await Promise.all(ids.map(async (id) => {
    try { return await get({ id }); } catch (e) { return e.code === "NOT_FOUND" ? null : { id, score: 0, name: "", tags: [] }; }
  }));
  const rows = xs.filter((x) => x && x.score > 0 && !x.tags.includes("skip"))
    .map((x) => ({ ...x, label: ` + "`${x.name}#${x.id}`" + ` }))
    .sort((a, b) => b.score - a.score || a.id - b.id);
  const by = {};
  for (const r of rows) by[r.name] = (by[r.name] || 0) + r.score;
  return { n: rows.length, top: rows.slice(0, 1), keys: Object.keys(by) };
}
main();
`
