package protocol

import (
	"strconv"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/internal/version"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/policy"
)

// Features are the extensions to protocol 2 this sidecar has, as ping
// reports them. A new extension adds its name here and nowhere else.
var Features = []string{
	"cancel",            // in-band cancel of a running start/resume
	"wall_time",         // limits.wall_time_ms
	"snapshot_delivery", // snapshot_delivery full/delta/none
	"snapshot_fetch",    // the snapshot method
	"stage",             // the stage method, resume by stage_id
	"pinned_key",        // --snapshot-key-file
	"sealed_snapshots",  // options.seal_key_base64
	"batch_calls",       // options.host_calls "batch": every outstanding call in one step
	"error_codes",       // error_code on every ok:false response
	"stage_values",      // source, program, inputs and answers from a stage
	"console",           // options.console, console.* capabilities, logs on every step
	"namespaces",        // dotted capability names: namespace objects
	"typescript",        // compile's language "typescript"
	"entry_call",        // options.entry "call": the program evaluates to the function to call
	"stats",             // the stats method: what the session holds, and its counters
}

// pong is ping's result ({"kind":"pong"}).
type pong struct{}

func (pong) encode(id uint64, jsonl bool) Response {
	b := okHeader(id, jsonl, 0)
	b = append(b, resultOf+wire.KindPong+`","`+wire.FieldSidecarVersion+`":`...)
	b = appendString(b, version.Version)
	b = append(b, `,"`+wire.FieldProtocolVersions+`":[`...)
	b = strconv.AppendInt(b, Version, 10)
	b = append(b, `],"`+wire.FieldTransport+`":`...)
	if jsonl {
		b = append(b, `"`+wire.TransportJSONL+`"`...)
	} else {
		b = append(b, `"`+wire.TransportBinary+`"`...)
	}
	b = append(b, `,"`+wire.FieldFeatures+`":[`...)
	for i, f := range Features {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f)
	}
	b = append(b, `],"`+wire.FieldDefaultLimits+`":{`...)
	// The contract's five counting limits; wall_time_ms has no default
	// beyond "none" and is not among them.
	d := policy.DefaultLimits()
	for i, v := range []uint64{d.InstructionBudget, d.HeapLimitBytes, d.AllocationBudget, d.CallDepthLimit, d.MaxOutstandingHostCalls} {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, policy.LimitNames()[i])
		b = append(b, ':')
		b = strconv.AppendUint(b, v, 10)
	}
	b = append(b, `},"`+wire.FieldMaxRequestBytes+`":`...)
	b = strconv.AppendInt(b, frame.MaxRequestSize, 10)
	return Response{Header: append(b, "}}"...)}
}
