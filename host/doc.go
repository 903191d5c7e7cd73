// Package host embeds mustard-sidecar in a Go program: it runs the sidecar
// process, speaks its protocol, signs snapshots, and keeps a pool of
// processes. It does not link the JavaScript engine: the guest runs in the
// sidecar process. Package durable (host/durable) is the run loop most
// hosts want on top of it, and package value holds the values that cross
// and their conversion to and from Go values.
//
// # Finding the sidecar
//
// A Client runs the command in Config.Cmd, in the manner of
// hashicorp/go-plugin: the caller chooses the binary, arguments and
// environment. Without one it runs DefaultCommand, "mustard-sidecar" from
// PATH, which
//
//	go install github.com/mustard-sidecar/mustard-sidecar/cmd/mustard-sidecar@latest
//
// puts there.
//
// # Two levels
//
// Client is one process, request by request: Compile, Start, Resume,
// Ping, FetchSnapshot and Stage, with typed requests and steps. Every
// snapshot it is asked to resume is authenticated with a Key. Pool keeps
// several, replacing those that die.
//
// durable.Runner (package host/durable) is the run loop most hosts want:
// Run takes a program, its inputs and a Go function per capability, runs
// the program to completion on a Pool, stores a checkpoint after every
// step, and continues an execution on a new process when one dies.
// Releases up to 0.3 had it in this package, with its stores;
// CHANGELOG.md's upgrade notes list where each name went.
//
// # Logs and traces
//
// PoolConfig.Logger takes a *slog.Logger: the pool logs its processes'
// starts, exits (with the exit status and what the sidecar said last) and
// respawns; durable.Runner logs to it too unless given its own. The
// sidecar itself logs to its stderr with --log-format text or json.
//
// # Tool calls run concurrently
//
// A guest's capability calls in async code return promises, so one
// execution can have many outstanding at once. With
// StartRequest.HostCalls = HostCallsBatch a Client lists every
// outstanding call in Suspension.Calls, each with its id, and
// ResumeRequest.Answers answers any of them; the zero value keeps one
// call per step (Suspension.Capability and Args, ResumeRequest.Payload).
// durable.Runner runs them concurrently.
//
// # Console, namespaces, TypeScript and function-shaped programs
//
// Programs as models write them (the console, namespaces, typescript and
// entry_call extensions):
//
//	prog, err := c.CompileWith(ctx, src, host.CompileOptions{Language: host.TypeScript})
//	st, err := c.Start(ctx, host.StartRequest{Program: prog, Inputs: inputs,
//		Capabilities: []string{"github.create_issue"}, Console: host.ConsoleCollect, Entry: host.EntryCall})
//
// A capability name may be a dotted path: "github.create_issue" gives the
// guest a namespace object github with a function create_issue, and the
// host sees the full name (Suspension.Capability, Call.Name,
// durable.Execution.Capabilities keys). Capabilities named console.log,
// console.warn, console.error, console.info or console.debug give the
// guest a console whose calls are host calls, answered like any other
// (the guest's call returns undefined, or throws an error answer). With
// ConsoleCollect the methods not granted write lines instead: each Step
// carries the lines of its own segment in Logs (hot or cold, a resume
// never repeats earlier segments' lines), a failed start or resume's
// *Error in its Logs, and Limits.MaxLogBytes bounds them per step (a
// durable.Runner hands them to Execution.OnLog).
// EntryCall runs a program that evaluates to a function, `async ({ repo })
// => { ... }`, calling it with the inputs object.
//
// # Sealing
//
// A snapshot holds the program, its inputs and every answer the host gave.
// An execution started with a SealKey (StartRequest.SealKey, or
// durable.Runner.SealKey for all of a Runner's executions) has every
// snapshot sealed, so that bytes at rest, in a store or a queue, show only
// their sizes. Every resume must give the same key
// (ResumeRequest.SealKey); the sidecar refuses one without it or with
// another, and the execution stays resumable with the right key.
//
// # Trust
//
// The Key guards the wire between the host and its sidecar processes: a
// sidecar resumes only snapshot bytes whose token proves a key holder
// accepted them. Package durable says what that means for a store.
//
// # Values
//
// Inputs, capability arguments, answers and results are value.Value
// (package github.com/mustard-sidecar/mustard-sidecar/value), which holds
// every StructuredValue exactly: undefined, null, array holes, NaN,
// ±Infinity, −0, and object member order. value.FromGo and value.Decode
// convert between Go values and value.Value in the manner of
// encoding/json, with value.Undefined() and value.Hole() as the Go forms
// of undefined and holes; NaN, ±Inf and −0 are float64 values. This
// package's ValueOf, Decode, Undefined and Hole are the deprecated forms
// of the same.
//
// # Concurrency and cancellation
//
// A Client may be used from several goroutines. Its requests are written
// in call order and answered one at a time in that order, so a call waits
// for the calls before it; run executions in parallel with a Pool. Every
// call takes a context. Cancelling the context of a Start or Resume sends
// the sidecar the in-band cancel request while the call is outstanding:
// the execution ends with "Limit: execution cancelled" and the process
// stays usable. A sidecar that does not answer within Config.CancelGrace
// is killed. Other calls simply stop waiting; a request not yet written
// is never sent.
//
// A Pool replaces a process that dies when its place is next needed,
// after a backoff if that place's processes keep dying young
// (PoolConfig.Backoff). Pool.Processes reports each place's process (PID,
// start time, busy, restarts) for operators.
//
// # Bounds
//
// A request over the sidecar's 1 MiB limit is refused before anything is
// written (ErrRequestTooLarge), since the sidecar would end the session
// on it. Compile, Start and Resume send larger sources, programs, inputs,
// snapshots and answers through stages (the stage and stage_values
// extensions) by themselves: a 20 MB tool answer works as a small one,
// within the sidecar's stage bound (64 MiB by default, for everything a
// request stages together) and the execution's limits. A response, and a snapshot assembled from chunks, is bounded
// by Config.MaxResponseBytes (65 MiB by default: the sidecar's default
// 64 MiB snapshot bound plus room for the header). Memory grows with the
// bytes actually received, so a length prefix that lies costs nothing;
// a response over the bound is a protocol error and the process is
// killed. Runner asks for delta delivery, so each step moves only the
// bytes a snapshot grew by.
//
// # Errors
//
// A request the sidecar refused is an *Error with its message ("Runtime:
// TypeError: ...", "unknown snapshot_id ...") and its Code, the stable
// error_code to branch on ("runtime", "unknown_snapshot_id"; the table in
// docs/protocol.md lists them). errors.Is matches the failures a host acts
// on: ErrUnknownSnapshotID, ErrUnknownPolicyID, ErrUnknownProgramID (the
// process does not hold what was named, never did or evicted it: send
// the bytes),
// ErrTamperedSnapshot, ErrSealKey and ErrLimit (any limit, a cancel
// among them). From a sidecar too old to send codes, Code is derived from
// the message for those failures and the guest kinds. A guest failure's
// parts are fields, read from the message: GuestName ("TypeError"),
// GuestMessage, Line, Column and Stack (one Frame per guest frame), so
// that a host can show a model its mistake without parsing text.
//
// durable.Runner's refusals match sentinels of package durable. A process
// that died fails every outstanding and later call with an error wrapping
// ErrProcessExited, whose text gives the exit status and the first (and
// last) line of the sidecar's stderr. A sidecar that breaks the wire
// contract is killed (ErrProtocol). Calls after Close fail with ErrClosed.
package host
