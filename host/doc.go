// Package host embeds mustard-sidecar in a Go program: it runs the sidecar
// process, speaks its protocol, converts Go values to and from
// StructuredValues, signs snapshots, and recovers executions when a
// sidecar process dies. It does not link the JavaScript engine: the
// guest runs in the sidecar process.
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
// snapshot it is asked to resume is authenticated with a Key.
//
// Runner is the run loop most hosts want: Run takes a program, its inputs
// and a Go function per capability, runs the program to completion on a
// Pool of processes, and stores a Checkpoint after every step in a Store
// (MemoryStore, DirStore, or the host's own). If a process dies, Run
// continues the execution on a new process from the checkpoint, without
// the capability functions noticing; see Runner for what "each call is
// answered once" means across crashes of the host itself. Cancelling
// Run's context pauses an execution (a later Run continues it);
// Runner.Cancel ends it for good, and later Runs fail with ErrCancelled.
//
// # Stores
//
// A snapshot is an append-only journal: each snapshot of an execution is
// a prefix of the next, and a step adds its answer and its next call,
// whatever the length of the history. The Runner asks for deltas, keeps
// the snapshot in a buffer it appends to and the SHA-256 state of it, so
// checking and extending it costs what the step adds; and it saves each
// step that extends the stored snapshot through the Store's append path,
// AppendStore, when the Store has one. DirStore does: one journal file
// per execution, appended to and synced, and a small record naming its
// valid length, replaced atomically, as the commit point. A step then
// costs the same at step 1,000 as at step 10 (bench/README.md has the
// figures).
//
// # Tool errors and retries
//
// A capability's CallError throws in the guest. Any other error stops Run
// unless Runner.Retry (or Execution.Retry, per capability) says otherwise:
//
//	r.Retry = host.RetryPolicy{Attempts: 4, Backoff: 200 * time.Millisecond}
//
// tries a call again, with the same Call.ID and Call.Attempt counting,
// after an error marked host.Transient (or any error whose Transient()
// method says so; RetryPolicy.Retryable chooses otherwise), with a
// doubling, randomized backoff; a final error (not transient, or the last
// try's) throws in the guest, catchable, with the tool's message. Each
// try goes through the Call interceptor, and the Logger records retries.
//
// # Several host replicas
//
// Hosts that share a Store (several replicas on one DirStore directory, or
// a Store of the host's own over a database) run each execution in one
// Runner at a time: a Store that implements LeaseStore (MemoryStore and
// DirStore do) records which Runner owns an execution and until when. A
// Run acquires the execution's lease before it loads anything, renews it
// every third of Runner.LeaseTTL (DefaultLeaseTTL, 15 s), saves every
// checkpoint with the lease's fencing token (Checkpoint.Fence), and
// releases it when it returns. Another Run of the same ID fails with
// ErrExecutionBusy, or with Runner.WaitIfBusy waits for the lease (and
// then returns the stored result, or continues where the first left off).
// A lease that was not released frees when it expires; DirStore's also
// the moment its holder's process ends, since its holder keeps a file
// locked (flock) that the kernel unlocks at exit. A Run whose lease was
// taken over (it hung past its TTL) ends with ErrLeaseLost, and the Store
// refuses its writes, so a stale replica cannot undo another's steps.
//
// # Listing and retention
//
// A Store that implements ListStore (MemoryStore and DirStore do) lists
// its executions by State (running, waiting, done, failed, cancelled),
// each with the time of its last step (ExecutionStatus.Updated), and
// reports one's status without running it (Runner.Status works with any
// Store). Prune applies a Retention, deleting finished executions (and,
// if asked, abandoned waiting ones) past their age; running ones stay:
//
//	gone, err := host.Prune(ctx, store, host.Retention{Done: 24 * time.Hour, Failed: 7 * 24 * time.Hour})
//
// # Logs and traces
//
// PoolConfig.Logger and Runner.Logger take a *slog.Logger: the pool logs
// its processes' starts, exits (with the exit status and what the sidecar
// said last) and respawns; the Runner logs cold resumes (with the
// reason), steps retried after a process died under them, and executions
// that hit a limit (with the error code). Runner.Intercept wraps every
// Run, segment and capability call (Interceptor), with contexts that
// nest, so that one span per execution, per segment and per tool call is
// a few lines with any tracer (see the Interceptor example). The sidecar
// itself logs to its stderr with --log-format text or json.
//
// # Tool calls run concurrently
//
// A guest's capability calls in async code return promises, so one
// execution can have many outstanding at once:
//
//	const [user, orders] = await Promise.all([get_user(id), get_orders(id)]);
//
// The Runner runs them concurrently (batch mode, the batched host calls
// extension): each outstanding call gets its own goroutine, up to
// Runner.MaxConcurrentCalls per execution (DefaultMaxConcurrentCalls, 16),
// so a Promise.all of ten 200 ms tools takes about 200 ms, not 2 s. As
// soon as any call returns, its answer is stored and the execution
// resumed with every answer that has come in, while the other calls go
// on; calls are never started twice. Capabilities must therefore be safe
// for concurrent use; their ctx is cancelled when Run ends, and Run waits
// for them. Call.ID numbers each call within its execution (Seq is ID-1)
// and stays the same after crashes and in later Runs: with the execution
// ID it is an idempotency key for tools with effects outside the host.
// Runner.HostCalls = HostCallsOne answers one call per step instead, as
// before batch mode.
//
// With a Client, StartRequest.HostCalls = HostCallsBatch lists every
// outstanding call in Suspension.Calls, each with its id, and
// ResumeRequest.Answers answers any of them; the zero value keeps one
// call per step (Suspension.Capability and Args, ResumeRequest.Payload).
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
// Execution.Capabilities keys). Capabilities named console.log,
// console.warn, console.error, console.info or console.debug give the
// guest a console whose calls are host calls, answered like any other
// (the guest's call returns undefined, or throws an error answer). With
// ConsoleCollect the methods not granted write lines instead: each Step
// carries the lines of its own segment in Logs (hot or cold, a resume
// never repeats earlier segments' lines), a failed start or resume's
// *Error in its Logs, and Limits.MaxLogBytes bounds them per step. A
// Runner hands them to Execution.OnLog once each step is stored (see
// Execution.OnLog for what once means across crashes) and shows each
// segment's in SegmentInfo.Logs.
// EntryCall runs a program that evaluates to a function, `async ({ repo })
// => { ... }`, calling it with the inputs object.
//
// # Sealing
//
// A snapshot holds the program, its inputs and every answer the host gave.
// An execution started with a SealKey (StartRequest.SealKey, or
// Runner.SealKey for all of a Runner's executions) has every snapshot
// sealed, so that bytes at rest, in a Store or a queue, show only their
// sizes:
//
//	r := &host.Runner{Pool: pool, Key: key, SealKey: seal, Store: store}
//
// Every resume must give the same key (ResumeRequest.SealKey; the Runner
// does it, also after a crash); the sidecar refuses one without it or
// with another, and the execution stays resumable with the right key.
// The Runner seals the other fields of each Checkpoint too (the
// outstanding calls' arguments, their answers, the result), so that
// nothing of a sealed execution is stored in plaintext.
//
// # Trust: the Key and the Store
//
// The Key guards the wire between the host and its sidecar processes: a
// sidecar resumes only snapshot bytes whose token proves a key holder
// accepted them. A Runner signs whatever its Store returns, so the Store
// is trusted as the host process is: a Runner with a new Key (a restarted
// process that called GenerateKey) continues the executions stored before
// it, by design, and a Store writer can make it resume any bytes. A host
// whose Store others can write seals its executions (Runner.SealKey):
// sealed snapshot bytes and the sealed fields of each Checkpoint are
// authenticated under the seal key, bound to the execution and the step,
// so a writer without it cannot forge or move them, and a Runner with
// another seal key refuses them (ErrSealKey, ErrSealedCheckpoint). Even
// so, a Store writer can delete a checkpoint or put back an earlier one
// of the same execution (its calls are then asked again), and plaintext
// checkpoints in the same Store load as they are.
//
// # Values
//
// Inputs, capability arguments, answers and results are value.Value
// (package github.com/mustard-sidecar/mustard-sidecar/value), which holds
// every StructuredValue exactly: undefined, null, array holes, NaN,
// ±Infinity, −0, and object member order. ValueOf and Decode convert
// between Go values and value.Value in the manner of encoding/json, with
// Undefined and Hole as the Go forms of undefined and holes; NaN, ±Inf and
// −0 are float64 values.
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
// The Runner's refusals match sentinels too: ErrInvalidRun (a Runner or
// Execution missing what Run needs), ErrProgramMismatch,
// ErrExecutionBusy, ErrLeaseLost, ErrCapabilityNotGiven,
// ErrBadCheckpoint, ErrInterceptor, ErrInvalidAnswer,
// ErrProcessesKeepDying, ErrCancelled, ErrUnknownExecution,
// ErrExecutionDone and ErrSealedCheckpoint. A process that died fails
// every outstanding and later call with an error wrapping
// ErrProcessExited, whose text gives the exit status and the first (and
// last) line of the sidecar's stderr. A sidecar that breaks the wire contract is killed
// (ErrProtocol). Calls after Close fail with ErrClosed.
package host
