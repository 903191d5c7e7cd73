package protocol

import (
	"encoding/json"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"sync"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
)

// Warm prepares, in the background, what a process's first start would
// otherwise pay for itself: the engine's realms, and the one-time
// initialisations of the runtime and standard library on the start path
// (warmProcess). A serving process calls it at startup; a compile also
// does. It is cheap to call again.
func (s *Session) Warm() {
	s.engine.Warm()
	processWarm.Do(func() {
		s.warming.Add(1)
		go func() {
			defer s.warming.Done()
			warmProcess()
		}()
	})
}

// processWarm runs warmProcess once per process.
var processWarm sync.Once

// warmProcess does what the first start in a process would otherwise do
// for the first time, each costing it tens of microseconds (perf over 300
// fresh processes): the random source's per-process state (behind
// Entropy), the engine's (engine.WarmProcess), encoding/json's decoders
// for capabilities and limits.
func warmProcess() {
	RandomEntropy()
	engine.WarmProcess()
	opts := fields{
		{key: wire.FieldCapabilities, raw: json.RawMessage(`["a","b"]`)},
		{key: wire.FieldLimits, raw: json.RawMessage(`{"instruction_budget":1,"heap_limit_bytes":1048576,"max_outstanding_host_calls":1}`)},
		{key: wire.FieldProfile, raw: json.RawMessage(`true`)},
	}
	_, _ = opts.capabilities(wire.FieldCapabilities)
	_, _ = opts.limits(wire.FieldLimits)
	_, _ = opts.bool(wire.FieldProfile)
}
