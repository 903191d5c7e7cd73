package engine

import (
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
