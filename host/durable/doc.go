// Package durable runs mustard-sidecar executions to completion on a
// host.Pool: Runner.Run takes a program, its inputs and a Go function per
// capability, answers each capability call with its function, and stores
// a Checkpoint after every step in a Store (MemoryStore, DirStore, or the
// host's own). If a process dies, Run continues the execution on a new
// process from the checkpoint, without the capability functions
// noticing; see Runner for what "each call is answered once" means across
// crashes of the host itself. Cancelling Run's context pauses an
// execution (a later Run continues it); Runner.Cancel ends it for good,
// and later Runs fail with ErrCancelled.
//
// Package host is the client this package runs on: one process, request
// by request (host.Client), and a pool of them (host.Pool). Releases up to
// 0.3 had this package's names in package host; CHANGELOG.md's upgrade
// notes list where each went.
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
//	r.Retry = durable.RetryPolicy{Attempts: 4, Backoff: 200 * time.Millisecond}
//
// tries a call again, with the same Call.ID and Call.Attempt counting,
// after an error marked durable.Transient (or any error whose Transient()
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
//	gone, err := durable.Prune(ctx, store, durable.Retention{Done: 24 * time.Hour, Failed: 7 * 24 * time.Hour})
//
// # Logs and traces
//
// Runner.Logger takes a *slog.Logger (the Pool's, host.PoolConfig.Logger,
// if nil): the Runner logs cold resumes (with the reason), steps retried
// after a process died under them, and executions that hit a limit (with
// the error code). Runner.Intercept wraps every Run, segment and
// capability call (Interceptor), with contexts that nest, so that one span
// per execution, per segment and per tool call is a few lines with any
// tracer (see the Interceptor example).
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
// Runner.HostCalls = host.HostCallsOne answers one call per step instead,
// as before batch mode.
//
// Execution.OnLog gets the guest's console lines once each step is
// stored (see Execution.OnLog for what once means across crashes), and
// SegmentInfo.Logs shows each segment's.
//
// # Sealing
//
// Runner.SealKey seals all of a Runner's executions (host.StartRequest.SealKey
// per execution), so that snapshot bytes at rest, in a Store or a queue,
// show only their sizes:
//
//	r := &durable.Runner{Pool: pool, Key: key, SealKey: seal, Store: store}
//
// The Runner gives the same key to every resume, also after a crash; the
// sidecar refuses one without it or with another, and the execution stays
// resumable with the right key. The Runner seals the other fields of each
// Checkpoint too (the outstanding calls' arguments, their answers, the
// result), so that nothing of a sealed execution is stored in plaintext.
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
// another seal key refuses them (host.ErrSealKey, ErrSealedCheckpoint). Even
// so, a Store writer can delete a checkpoint or put back an earlier one
// of the same execution (its calls are then asked again), and plaintext
// checkpoints in the same Store load as they are.
//
// # Errors
//
// A guest failure is a *host.Error (see package host). The Runner's
// refusals match sentinels: ErrInvalidRun (a Runner or Execution missing
// what Run needs), ErrProgramMismatch, ErrExecutionBusy, ErrLeaseLost,
// ErrCapabilityNotGiven, ErrBadCheckpoint, ErrInterceptor,
// ErrInvalidAnswer, ErrProcessesKeepDying, ErrCancelled,
// ErrUnknownExecution, ErrExecutionDone and ErrSealedCheckpoint.
package durable
