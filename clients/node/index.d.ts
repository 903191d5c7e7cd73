// Types of the mustard-sidecar package (hand-written; the package is
// JavaScript). They compile under `tsc --strict`.

/// <reference types="node" />

export type StructuredValue =
  | undefined
  | null
  | boolean
  | number
  | string
  | StructuredValue[]
  | { [key: string]: StructuredValue };

export interface CapabilityError extends Error {
  code?: string;
  details?: StructuredValue;
}

/**
 * The context a capability is called with, as `this` (an arrow function
 * ignores it): the call's id within its execution (the same on every
 * attempt), a signal that aborts when the run ends, and in the executor
 * the job's id.
 */
export interface CallContext {
  readonly callId: number;
  readonly signal: AbortSignal;
  readonly jobId?: string;
  /** In the executor: 1 for a call's first try, 2 for its first retry, ... */
  readonly attempt?: number;
}

export type Capability = (this: CallContext, ...args: StructuredValue[]) => StructuredValue | Promise<StructuredValue>;

export type SnapshotKey = string | Buffer | Uint8Array;

/**
 * Callbacks for the guest's console, as in the reference: each one given
 * becomes the capability `console.<method>`, a host call that gets the
 * guest's arguments; the guest's call returns undefined whatever the
 * callback returns, and throws what it throws. `info` and `debug` are this
 * package's additions.
 */
export interface ConsoleCallbacks {
  log?: Capability;
  warn?: Capability;
  error?: Capability;
  info?: Capability;
  debug?: Capability;
}

/**
 * "collect": the guest's console methods without a callback format their
 * arguments as Node's console.log does, and the lines come back with each
 * step (`Progress.logs`, `MustardError.logs`, `onLog`). "off" (the
 * default): the guest has a console only for the callbacks given.
 */
export type ConsoleMode = 'off' | 'collect';

/** One line the guest wrote with console (consoleMode "collect"). */
export interface LogLine {
  readonly level: 'log' | 'info' | 'warn' | 'error' | 'debug';
  readonly text: string;
}

/** "call": the program evaluates to a function, called with the inputs object. */
export type Entry = 'script' | 'call';

export type HostCalls = 'one' | 'batch';

export type SnapshotDelivery = 'delta' | 'full' | 'none';

export interface RuntimeLimits {
  instructionBudget?: number;
  heapLimitBytes?: number;
  allocationBudget?: number;
  callDepthLimit?: number;
  maxOutstandingHostCalls?: number;
  /** Wall time of each start/resume segment in ms; 0 or absent: none. Not deterministic. */
  wallTimeMs?: number;
  /** UTF-8 bytes of log lines one step may carry (262144); later lines are dropped and counted. */
  maxLogBytes?: number;
}

export interface PolicyOptions {
  /** Names may be dotted paths ("github.search"): the guest calls github.search(...). */
  capabilities?: Record<string, Capability>;
  console?: ConsoleCallbacks;
  /** Collect the guest's console lines (this package's; the reference has callbacks only). */
  consoleMode?: ConsoleMode;
  /** Receives each collected line, in order, as each step comes in. */
  onLog?: (line: LogLine) => void;
  limits?: RuntimeLimits;
  snapshotKey?: SnapshotKey;
  /** Seals every snapshot of the execution (at least 32 bytes). */
  sealKey?: Buffer | Uint8Array;
  /** "batch": every outstanding call is presented (and, in run(), started) at once. */
  hostCalls?: HostCalls;
}

export interface ExecutionContextOptions extends PolicyOptions {}

export interface ExecutionOptions extends PolicyOptions {
  inputs?: Record<string, StructuredValue>;
  context?: ExecutionContext;
  signal?: AbortSignal;
  /** The pool the async methods (and run(), then without blocking) run on; the shared one by default. */
  pool?: SidecarPool;
  /** How snapshot bytes travel; "delta" (the default) keeps full bytes at the host. */
  snapshotDelivery?: SnapshotDelivery;
  /** "call": the program's value is a function, called with the inputs object. */
  entry?: Entry;
}

export interface RunOptions extends ExecutionOptions {
  /** In batch mode, how many capability calls run at once (16). */
  maxConcurrentCalls?: number;
}

export interface ResumeOptions {
  signal?: AbortSignal;
}

export interface AsyncResumeOptions extends ResumeOptions {
  pool?: SidecarPool;
}

export interface CompileOptions {
  inputs?: string[];
  /** Accept a final top-level `return` whose value is the program's result. */
  lenientMode?: boolean;
  /** "typescript": type syntax is erased; errors point into the TypeScript source. */
  language?: 'javascript' | 'typescript';
}

export interface ProgressLoadOptionsBase extends PolicyOptions {
  limits: RuntimeLimits;
  snapshotKey: SnapshotKey;
  /**
   * Load without claiming the snapshot: by default a dump whose snapshot was
   * already resumed (or loaded) in this process is refused, as in the
   * reference; with multiUse it may be loaded and resumed again (each resume
   * replays from the snapshot, running the rest of the program again).
   */
  multiUse?: boolean;
}

export type ProgressLoadOptionsExplicit =
  | (ProgressLoadOptionsBase & { capabilities: Record<string, Capability>; console?: ConsoleCallbacks })
  | (ProgressLoadOptionsBase & { capabilities?: Record<string, Capability>; console: ConsoleCallbacks });

export interface ProgressLoadContextOptions {
  context: ExecutionContext;
  multiUse?: boolean;
}

export type ProgressLoadOptions = ProgressLoadOptionsExplicit | ProgressLoadContextOptions;

export interface SerializedProgress {
  capability: string;
  args: StructuredValue[];
  snapshot: Buffer;
  snapshot_id: string;
  snapshot_key_digest: string;
  token: string;
  program?: Buffer;
  program_id?: string;
  suspended_manifest?: string;
  suspended_manifest_token?: string;
}

export interface PersistedProgress extends SerializedProgress {
  /** The answer to the suspended call, saved before it is sent. */
  answer?: unknown;
}

export interface ProgressCall {
  readonly callId: number;
  readonly capability: string;
  readonly args: StructuredValue[];
}

export type CallAnswer =
  | { callId: number; value: StructuredValue }
  | { callId: number; error: unknown }
  | { callId: number; cancelled: true };

export type MustardErrorKind = 'Parse' | 'Validation' | 'Runtime' | 'Limit' | 'Serialization' | 'Sidecar' | 'Process';

export class MustardError extends Error {
  /** The third argument is the cause (as in the reference), or `{ cause, code }`. */
  constructor(kind: MustardErrorKind, message: string, causeOrOptions?: unknown);
  readonly cause?: unknown;
  readonly kind: MustardErrorKind;
  /** The protocol's error_code, e.g. "runtime", "limit_instruction_budget", "unknown_snapshot_id". */
  readonly code?: string;
  /** The lines the guest wrote with console in the step that failed (consoleMode "collect"). */
  readonly logs?: readonly LogLine[];
}
export class MustardParseError extends MustardError {}
export class MustardValidationError extends MustardError {}
export class MustardRuntimeError extends MustardError {}
export class MustardLimitError extends MustardError {}
export class MustardSerializationError extends MustardError {}
export class MustardSidecarError extends MustardError {}
/**
 * A request that cannot reach the sidecar: over its 1 MiB request limit even
 * with its large values staged, or with a value the sidecar's stage bound
 * (--max-stage-bytes, 64 MiB by default) cannot hold; `code` is then
 * "stage_too_large" or "too_many_stages". Nothing ran: the process serves
 * on, and a Progress whose answer it was can be resumed again.
 */
export class MustardRequestTooLargeError extends MustardSidecarError {}
export class MustardProcessError extends MustardError {}

export class Progress {
  readonly capability: string;
  readonly args: StructuredValue[];
  /** Batch mode: every outstanding call, in call order. */
  readonly calls?: readonly ProgressCall[];
  /** The lines the guest wrote with console in the step that suspended here. */
  readonly logs: readonly LogLine[];
  readonly snapshot: Buffer;
  readonly sealed: boolean;

  dump(): SerializedProgress;
  resume(value: StructuredValue, options?: ResumeOptions): StructuredValue | Progress;
  resumeError(error: unknown, options?: ResumeOptions): StructuredValue | Progress;
  resumeCalls(answers: CallAnswer[], options?: ResumeOptions): StructuredValue | Progress;
  cancel(): StructuredValue | Progress;
  resumeAsync(value: StructuredValue, options?: AsyncResumeOptions): Promise<StructuredValue | Progress>;
  resumeErrorAsync(error: unknown, options?: AsyncResumeOptions): Promise<StructuredValue | Progress>;
  resumeCallsAsync(answers: CallAnswer[], options?: AsyncResumeOptions): Promise<StructuredValue | Progress>;
  cancelAsync(options?: AsyncResumeOptions): Promise<StructuredValue | Progress>;

  static load(state: SerializedProgress, options: ProgressLoadOptions): Progress;
}

export class ExecutionContext {
  constructor(options?: ExecutionContextOptions);
}

export class Mustard {
  constructor(code: string, options?: CompileOptions);
  readonly programId: string;
  run(options?: RunOptions): Promise<StructuredValue>;
  start(options?: ExecutionOptions): StructuredValue | Progress;
  startAsync(options?: ExecutionOptions): Promise<StructuredValue | Progress>;
  dump(): Buffer;
  static validateProgram(code: string, options?: CompileOptions): void;
  static load(buffer: Buffer | Uint8Array): Mustard;
}

export interface SidecarOptions {
  /** Path of the sidecar binary; else $MUSTARD_SIDECAR_BIN, else mustard-sidecar from PATH. */
  sidecar?: string;
  args?: string[];
  env?: Record<string, string>;
  maxResponseBytes?: number;
  closeGraceMs?: number;
  cancelGraceMs?: number;
}

export interface SidecarPoolOptions extends SidecarOptions {
  size?: number;
}

export interface ProcessInfo {
  id: number;
  pid: number;
  busy: boolean;
  startedAt: number;
  requests: number;
  /** Values uploaded through stages (sources, programs, inputs, answers, snapshots past 1 MiB). */
  stages: number;
}

/** A sidecar process's answer to the `stats` method (docs/protocol.md, "stats"). */
export interface SidecarStats {
  kind: 'stats';
  memory_budget_bytes: number;
  memory_used_bytes: number;
  memory_reserved_bytes: number;
  parked_executions: number;
  cached_programs: number;
  cached_snapshots: number;
  cached_policies: number;
  staged_bytes: number;
  compiles: number;
  hot_resumes: number;
  replays: number;
  evicted_executions: number;
  evictions: number;
}

export interface ProcessStats {
  id: number;
  pid: number;
  /** null: the process exited before answering. */
  stats: SidecarStats | null;
}

export class SidecarPool {
  constructor(options?: SidecarPoolOptions);
  readonly size: number;
  readonly restarts: number;
  processes(): ProcessInfo[];
  /** Each running process's stats, in the order of processes(); starts no process. */
  stats(): Promise<ProcessStats[]>;
  close(): Promise<void>;
}

export interface SidecarResponse {
  result: any;
  payload: Buffer;
  profile?: { execution_ns: number; response_prepare_ns: number; instructions?: number };
}

export class SidecarClient {
  static start(options?: { command?: string } & Omit<SidecarOptions, 'sidecar'>): Promise<SidecarClient>;
  readonly pid: number;
  readonly alive: boolean;
  readonly exitCode: number | null | undefined;
  request(
    method: string,
    fields: Record<string, unknown>,
    payload?: Uint8Array | null,
    options?: { signal?: AbortSignal; cancellable?: boolean },
  ): Promise<SidecarResponse>;
  kill(): void;
  close(): Promise<void>;
}

export interface ConfigureOptions extends SidecarOptions {
  /** Processes behind run() and the async methods (1 to 4, by CPU count). */
  poolSize?: number;
  /** Processes behind new Mustard(), start() and resume() (1). */
  syncPoolSize?: number;
  /** The host-call mode of executions that do not say ("one"). */
  hostCalls?: 'one' | 'batch';
  /**
   * false: run() without a pool steps on the shared pool, without
   * blocking. true (default): on Linux it steps on the synchronous API's
   * process, each step blocking the thread, as the reference's addon.
   */
  blockingRun?: boolean;
  /**
   * Where the synchronous API and run() without a pool step: "process"
   * (default; $MUSTARD_SIDECAR_ENGINE may say otherwise), a sidecar
   * process, or "in-process", the sidecar's sessions in this process
   * through the addon (`npm run build:native`): no process boundary, a
   * step a function call. `args` configure either; pools stay processes.
   */
  engine?: 'process' | 'in-process';
  /** The in-process engine's addon file; else $MUSTARD_SIDECAR_ADDON, else native/mustard-sidecar.node. */
  addon?: string;
}

export function configure(options: ConfigureOptions): void;
export function processes(): { pool: ProcessInfo[]; sync: ProcessInfo[] };
export function shutdown(): Promise<void>;

export type MustardJobId = string;
export type MustardJobState = 'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';

export interface MustardJobError {
  name: string;
  message: string;
  code?: string;
  details?: StructuredValue;
}

export interface MustardJobRecord<
  TInput extends Record<string, StructuredValue> = Record<string, StructuredValue>,
  TResult extends StructuredValue = StructuredValue,
> {
  jobId: MustardJobId;
  state: MustardJobState;
  input: TInput;
  capability?: string;
  args?: StructuredValue[];
  /** Batch mode: every call a waiting job is suspended on. */
  calls?: { callId: number; capability: string; args: StructuredValue[] }[];
  result?: TResult;
  error?: MustardJobError;
  attempts: number;
  createdAt: number;
  updatedAt: number;
}

/** An executor's ownership of one job in a store with leases. */
export interface MustardJobLease {
  jobId: MustardJobId;
  /** The worker holding it. */
  owner: string;
  /** The fencing token: new and greater at every acquisition; every write of the holder carries it. */
  token: number;
  /** When it ends unless renewed (ms since the epoch). */
  expiresAt: number;
}

/** A job as a listing reports it, read without running it. */
export interface MustardJobStatus {
  jobId: MustardJobId;
  state: MustardJobState;
  attempts: number;
  createdAt: number;
  /** The time of its last step. */
  updatedAt: number;
  /** A waiting job: the (first) capability it waits on. */
  capability?: string;
  error?: MustardJobError;
  /** While an executor holds its lease: the holder and when the lease ends unrenewed. */
  owner?: string;
  leaseExpiresAt?: number;
}

export interface MustardJobListOptions {
  /** Only jobs in one of these states (every job if neither is given). */
  states?: MustardJobState[];
  state?: MustardJobState;
}

/**
 * A store's writes (update, saveProgress, deleteProgress) get the
 * fencing token of the writer's lease as their last argument when the
 * store has leases (acquireLease, renewLease, releaseLease); such a store
 * refuses a write whose token is not the job's lease's with an error
 * whose `code` is 'lease_lost'. A store without those methods works as
 * before, its claims the only ownership (one process).
 */
export interface MustardExecutorStore<
  TInput extends Record<string, StructuredValue> = Record<string, StructuredValue>,
  TResult extends StructuredValue = StructuredValue,
> {
  enqueue(record: MustardJobRecord<TInput, TResult>): Promise<{ jobId: MustardJobId; inserted: boolean }>;
  get(jobId: MustardJobId): Promise<MustardJobRecord<TInput, TResult> | null>;
  claimRunnable(limit: number, workerId: string, now: number): Promise<MustardJobId[]>;
  releaseClaim(jobId: MustardJobId, workerId: string): Promise<void>;
  update(jobId: MustardJobId, patch: Partial<MustardJobRecord<TInput, TResult>>, fence?: number): Promise<void>;
  /** Must keep every field of progress, answer included. */
  saveProgress(jobId: MustardJobId, progress: PersistedProgress, fence?: number): Promise<void>;
  loadProgress(jobId: MustardJobId): Promise<PersistedProgress | null>;
  deleteProgress(jobId: MustardJobId, fence?: number): Promise<void>;
  requestCancel(jobId: MustardJobId): Promise<'cancelled' | 'requested' | 'ignored'>;
  consumeCancel(jobId: MustardJobId): Promise<boolean>;
  /** Takes the job's lease for owner (a new token), or null while another owner's lease is active. */
  acquireLease?(jobId: MustardJobId, owner: string, ttlMs: number): Promise<MustardJobLease | null>;
  /** Extends lease; rejects with an error whose code is 'lease_lost' if it is no longer the job's. */
  renewLease?(jobId: MustardJobId, lease: MustardJobLease, ttlMs: number): Promise<MustardJobLease>;
  releaseLease?(jobId: MustardJobId, lease: MustardJobLease): Promise<void>;
  /** For MustardExecutor.list() and prune(). */
  listJobs?(options?: MustardJobListOptions): Promise<MustardJobStatus[]>;
  jobStatus?(jobId: MustardJobId): Promise<MustardJobStatus | null>;
  /** Deletes a job; false if it is unknown or its lease is held. */
  deleteJob?(jobId: MustardJobId): Promise<boolean>;
}

/** Options of the executor's stores. */
export interface MustardExecutorStoreOptions {
  /** A claim's lease before the executor renews it as its own. */
  leaseMs?: number;
  /** The clock (Date.now). */
  now?: () => number;
}

interface MustardLeasedStoreMethods<
  TInput extends Record<string, StructuredValue> = Record<string, StructuredValue>,
  TResult extends StructuredValue = StructuredValue,
> {
  enqueue(record: MustardJobRecord<TInput, TResult>): Promise<{ jobId: MustardJobId; inserted: boolean }>;
  get(jobId: MustardJobId): Promise<MustardJobRecord<TInput, TResult> | null>;
  claimRunnable(limit: number, workerId: string, now?: number): Promise<MustardJobId[]>;
  releaseClaim(jobId: MustardJobId, workerId: string): Promise<void>;
  update(jobId: MustardJobId, patch: Partial<MustardJobRecord<TInput, TResult>>, fence?: number): Promise<void>;
  saveProgress(jobId: MustardJobId, progress: PersistedProgress, fence?: number): Promise<void>;
  loadProgress(jobId: MustardJobId): Promise<PersistedProgress | null>;
  deleteProgress(jobId: MustardJobId, fence?: number): Promise<void>;
  requestCancel(jobId: MustardJobId): Promise<'cancelled' | 'requested' | 'ignored'>;
  consumeCancel(jobId: MustardJobId): Promise<boolean>;
  acquireLease(jobId: MustardJobId, owner: string, ttlMs: number): Promise<MustardJobLease | null>;
  renewLease(jobId: MustardJobId, lease: MustardJobLease, ttlMs: number): Promise<MustardJobLease>;
  releaseLease(jobId: MustardJobId, lease: MustardJobLease): Promise<void>;
  listJobs(options?: MustardJobListOptions): Promise<MustardJobStatus[]>;
  jobStatus(jobId: MustardJobId): Promise<MustardJobStatus | null>;
  deleteJob(jobId: MustardJobId): Promise<boolean>;
}

/** Jobs in memory, leased to one worker at a time. */
export class InMemoryMustardExecutorStore<
  TInput extends Record<string, StructuredValue> = Record<string, StructuredValue>,
  TResult extends StructuredValue = StructuredValue,
> implements MustardExecutorStore<TInput, TResult>, MustardLeasedStoreMethods<TInput, TResult> {
  constructor(options?: MustardExecutorStoreOptions);
  enqueue(record: MustardJobRecord<TInput, TResult>): Promise<{ jobId: MustardJobId; inserted: boolean }>;
  get(jobId: MustardJobId): Promise<MustardJobRecord<TInput, TResult> | null>;
  claimRunnable(limit: number, workerId: string, now?: number): Promise<MustardJobId[]>;
  releaseClaim(jobId: MustardJobId, workerId: string): Promise<void>;
  update(jobId: MustardJobId, patch: Partial<MustardJobRecord<TInput, TResult>>, fence?: number): Promise<void>;
  saveProgress(jobId: MustardJobId, progress: PersistedProgress, fence?: number): Promise<void>;
  loadProgress(jobId: MustardJobId): Promise<PersistedProgress | null>;
  deleteProgress(jobId: MustardJobId, fence?: number): Promise<void>;
  requestCancel(jobId: MustardJobId): Promise<'cancelled' | 'requested' | 'ignored'>;
  consumeCancel(jobId: MustardJobId): Promise<boolean>;
  acquireLease(jobId: MustardJobId, owner: string, ttlMs: number): Promise<MustardJobLease | null>;
  renewLease(jobId: MustardJobId, lease: MustardJobLease, ttlMs: number): Promise<MustardJobLease>;
  releaseLease(jobId: MustardJobId, lease: MustardJobLease): Promise<void>;
  listJobs(options?: MustardJobListOptions): Promise<MustardJobStatus[]>;
  jobStatus(jobId: MustardJobId): Promise<MustardJobStatus | null>;
  deleteJob(jobId: MustardJobId): Promise<boolean>;
}

/**
 * What the executor does when a capability throws: up to `attempts` tries
 * of the call in all (each with the same `this.callId`), waiting
 * `backoffMs` (100) doubled at each try, at most `maxBackoffMs` (10000),
 * drawn at random between half and all of that, while `retryable(error)`
 * (by default isTransient) says so. The last try's error, or one that is
 * not retryable, is thrown in the guest, which can catch it.
 */
export interface MustardRetryPolicy {
  attempts: number;
  backoffMs?: number;
  maxBackoffMs?: number;
  retryable?: (error: unknown) => boolean;
}

/** Finished jobs are kept this many milliseconds after their last step; a state not given is kept for good. */
export interface MustardRetention {
  completed?: number;
  failed?: number;
  cancelled?: number;
  /** The time to measure from (Date.now()). */
  now?: number;
}

/** A store's write carried the token of a lease that is no longer the job's. */
export class MustardLeaseLostError extends Error {
  constructor(jobId: MustardJobId);
  readonly code: 'lease_lost';
}

/** Marks error as worth another try (see MustardRetryPolicy) and returns it. */
export function transient<E>(error: E): E extends object ? E : Error;
/** Whether error was marked with transient(), or has `transient === true`. */
export function isTransient(error: unknown): boolean;

export interface MustardExecutorOptions<
  TInput extends Record<string, StructuredValue> = Record<string, StructuredValue>,
  TResult extends StructuredValue = StructuredValue,
> {
  program: Mustard;
  capabilities: Record<string, Capability>;
  snapshotKey?: SnapshotKey;
  sealKey?: Buffer | Uint8Array;
  store: MustardExecutorStore<TInput, TResult>;
  limits?: RuntimeLimits;
  pool?: SidecarPool;
  /** "batch": every outstanding call of a step at once. */
  hostCalls?: 'one' | 'batch';
  /** Batch mode: at most this many calls of a job at once (16). */
  maxConcurrentCalls?: number;
  /** A store with leases: how long the executor's lease on a job lasts unrenewed (15000); renewed every third of it. */
  leaseMs?: number;
  /** Retries of every capability's calls (none: a call's error goes to the guest). */
  retry?: MustardRetryPolicy;
  /** Retries by capability name, in place of retry. */
  retryPerCapability?: Record<string, MustardRetryPolicy>;
}

/** Jobs in a directory, written atomically; they survive the host process. */
export class FileMustardExecutorStore<
  TInput extends Record<string, StructuredValue> = Record<string, StructuredValue>,
  TResult extends StructuredValue = StructuredValue,
> implements MustardExecutorStore<TInput, TResult>, MustardLeasedStoreMethods<TInput, TResult> {
  constructor(dir: string, options?: MustardExecutorStoreOptions);
  readonly dir: string;
  list(): Promise<MustardJobId[]>;
  enqueue(record: MustardJobRecord<TInput, TResult>): Promise<{ jobId: MustardJobId; inserted: boolean }>;
  get(jobId: MustardJobId): Promise<MustardJobRecord<TInput, TResult> | null>;
  claimRunnable(limit: number, workerId: string, now?: number): Promise<MustardJobId[]>;
  releaseClaim(jobId: MustardJobId, workerId: string): Promise<void>;
  update(jobId: MustardJobId, patch: Partial<MustardJobRecord<TInput, TResult>>, fence?: number): Promise<void>;
  saveProgress(jobId: MustardJobId, progress: PersistedProgress, fence?: number): Promise<void>;
  loadProgress(jobId: MustardJobId): Promise<PersistedProgress | null>;
  deleteProgress(jobId: MustardJobId, fence?: number): Promise<void>;
  requestCancel(jobId: MustardJobId): Promise<'cancelled' | 'requested' | 'ignored'>;
  consumeCancel(jobId: MustardJobId): Promise<boolean>;
  acquireLease(jobId: MustardJobId, owner: string, ttlMs: number): Promise<MustardJobLease | null>;
  renewLease(jobId: MustardJobId, lease: MustardJobLease, ttlMs: number): Promise<MustardJobLease>;
  releaseLease(jobId: MustardJobId, lease: MustardJobLease): Promise<void>;
  listJobs(options?: MustardJobListOptions): Promise<MustardJobStatus[]>;
  jobStatus(jobId: MustardJobId): Promise<MustardJobStatus | null>;
  deleteJob(jobId: MustardJobId): Promise<boolean>;
}

export interface MustardExecutorRunWorkerOptions {
  maxConcurrentJobs?: number;
  signal?: AbortSignal;
  drain?: boolean;
}

export class MustardExecutor<
  TInput extends Record<string, StructuredValue> = Record<string, StructuredValue>,
  TResult extends StructuredValue = StructuredValue,
> {
  constructor(options: MustardExecutorOptions<TInput, TResult>);
  enqueue(input: TInput, options?: { jobId?: MustardJobId }): Promise<MustardJobId>;
  get(jobId: MustardJobId): Promise<MustardJobRecord<TInput, TResult> | null>;
  cancel(jobId: MustardJobId): Promise<void>;
  runWorker(options?: MustardExecutorRunWorkerOptions): Promise<void>;
  /** The store's jobs (in the given states), each with its last step time; needs a store with listJobs(). */
  list(options?: MustardJobListOptions): Promise<MustardJobStatus[]>;
  /** One job's status, read without running it; null if unknown. */
  status(jobId: MustardJobId): Promise<MustardJobStatus | null>;
  /** Deletes a finished job; false if unknown, unfinished or leased. */
  delete(jobId: MustardJobId): Promise<boolean>;
  /** Deletes the finished jobs past their state's retention; returns their ids. */
  prune(retention: MustardRetention): Promise<MustardJobId[]>;
}
