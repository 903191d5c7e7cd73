// Compiled by `npm run typecheck` (tsc --strict): the types describe the
// package's use as the tests exercise it.
import {
  Mustard,
  Progress,
  ExecutionContext,
  MustardExecutor,
  InMemoryMustardExecutorStore,
  FileMustardExecutorStore,
  MustardLeaseLostError,
  transient,
  isTransient,
  type MustardExecutorStore,
  type MustardJobStatus,
  MustardError,
  MustardLimitError,
  MustardRequestTooLargeError,
  SidecarPool,
  configure,
  type StructuredValue,
  type LogLine,
} from '..';

async function main(): Promise<void> {
  configure({ poolSize: 2 });
  const program = new Mustard('get_user(id).name', { inputs: ['id'] });
  const pool = new SidecarPool({ size: 2 });
  const value: StructuredValue = await program.run({
    inputs: { id: 7 },
    capabilities: { get_user: async (id) => ({ id, name: 'Ada' }) },
    limits: { instructionBudget: 1_000_000, wallTimeMs: 5000 },
    hostCalls: 'batch',
    pool,
    signal: AbortSignal.timeout(10_000),
  });
  const step = program.start({ inputs: { id: 1 }, capabilities: { get_user: () => null }, snapshotKey: 'k' });
  if (step instanceof Progress) {
    const dumped = step.dump();
    const loaded = Progress.load(dumped, { capabilities: { get_user: () => null }, limits: {}, snapshotKey: 'k', sealKey: Buffer.alloc(32) });
    const next: StructuredValue | Progress = await loaded.resumeAsync({ name: 'x' }, { pool });
    void next;
    if (step.calls) step.resumeCalls(step.calls.map((c) => ({ callId: c.callId, value: c.args[0] ?? null })));
  }
  const context = new ExecutionContext({ capabilities: {}, limits: {} });
  await program.startAsync({ context });
  const store = new InMemoryMustardExecutorStore<{ n: number }, number>();
  const executor = new MustardExecutor({ program, store, capabilities: {} });
  const id = await executor.enqueue({ n: 1 });
  await executor.runWorker({ drain: true, maxConcurrentJobs: 4 });
  const record = await executor.get(id);
  if (record?.state === 'completed') {
    const result: number | undefined = record.result;
    void result;
  }
  try {
    await program.run();
  } catch (error) {
    if (error instanceof MustardLimitError && error.code === 'limit_wall_time') return;
    if (error instanceof MustardRequestTooLargeError && error.code === 'stage_too_large') return;
    if (error instanceof MustardError) console.log(error.kind, value);
  }
  const staged: number = pool.processes().reduce((n, p) => n + p.stages, 0);
  void staged;
  const parked: number = (await pool.stats()).reduce((n, p) => n + (p.stats?.parked_executions ?? 0), 0);
  void parked;
  await pool.close();
}

void main;

async function codeMode(): Promise<void> {
  const program = new Mustard('github.search(q)', { language: 'typescript' });
  const lines: LogLine[] = [];
  const value: StructuredValue = await program.run({
    inputs: { q: 'x' },
    capabilities: { 'github.search': async (q) => [q] },
    console: { log: (...args) => void args, info: () => undefined },
    consoleMode: 'collect',
    onLog: (line) => lines.push(line),
    limits: { maxLogBytes: 1024 },
    entry: 'call',
  });
  void value;
  const step = program.start({ consoleMode: 'collect' });
  if (step instanceof Progress) {
    const first: readonly LogLine[] = step.logs;
    void first;
    Progress.load(step.dump(), { console: { warn: () => null }, limits: {}, snapshotKey: 'k' });
  }
  try {
    await program.run();
  } catch (error) {
    if (error instanceof MustardError && error.logs) console.log(error.logs.map((l) => `${l.level}: ${l.text}`));
  }
}

void codeMode;

// The call context, the file store and batch mode.
async function hostFeatures(program: Mustard): Promise<void> {
  configure({ hostCalls: 'batch' });
  await program.run({
    capabilities: {
      charge(cents) {
        const key: string = `${this.jobId ?? 'run'}:${this.callId}`;
        if (this.signal.aborted) return null;
        return [key, cents];
      },
      lookup: async (id) => id,
    },
  });
  const store = new FileMustardExecutorStore<{ n: number }, number>('/tmp/jobs', { leaseMs: 1000 });
  const executor = new MustardExecutor({ program, store, capabilities: {}, hostCalls: 'batch', maxConcurrentCalls: 4 });
  const record = await executor.get(await executor.enqueue({ n: 1 }));
  const ids: number[] = (record?.calls ?? []).map((c) => c.callId);
  void ids;
  void (await store.list());
}

void hostFeatures;

// Leases, retries, listing and retention in the executor.
async function executorOps(program: Mustard): Promise<void> {
  const store = new InMemoryMustardExecutorStore<{ n: number }, number>({ leaseMs: 5000, now: () => Date.now() });
  const executor = new MustardExecutor({
    program,
    store,
    capabilities: {
      fetch(url) {
        if (this.attempt === 1) throw transient(new Error(`unreachable ${String(url)}`));
        return url;
      },
    },
    leaseMs: 3000,
    retry: { attempts: 3, backoffMs: 50, maxBackoffMs: 1000 },
    retryPerCapability: { fetch: { attempts: 5, retryable: (e) => isTransient(e) || (e instanceof Error && /timeout/.test(e.message)) } },
  });
  const lease = await store.acquireLease('j', 'me', 1000);
  if (lease !== null) {
    const renewed = await store.renewLease('j', lease, 1000);
    await store.update('j', { state: 'running' }, renewed.token);
    await store.releaseLease('j', renewed);
  }
  const waiting: MustardJobStatus[] = await executor.list({ states: ['waiting', 'running'] });
  const one: MustardJobStatus | null = await executor.status('j');
  const gone: string[] = await executor.prune({ completed: 86_400_000, failed: 7 * 86_400_000 });
  const deleted: boolean = await executor.delete('j');
  void [waiting, one?.updatedAt, one?.owner, gone, deleted];
  const lost = new MustardLeaseLostError('j');
  const code: 'lease_lost' = lost.code;
  void code;
  // A store of the older interface, without leases or listing, still fits.
  const plain: MustardExecutorStore = {
    enqueue: async (r) => ({ jobId: r.jobId, inserted: true }),
    get: async () => null,
    claimRunnable: async () => [],
    releaseClaim: async () => {},
    update: async () => {},
    saveProgress: async () => {},
    loadProgress: async () => null,
    deleteProgress: async () => {},
    requestCancel: async () => 'ignored',
    consumeCancel: async () => false,
  };
  void new MustardExecutor({ program, store: plain, capabilities: {} });
}
void executorOps;

// The reference's compile and load options, and this package's multiUse.
function compat(dumped: ReturnType<Progress['dump']>): void {
  const lenient = new Mustard('return 1;', { lenientMode: true });
  void lenient;
  const again: Progress = Progress.load(dumped, { capabilities: {}, limits: {}, snapshotKey: 'k', multiUse: true });
  void again;
  const error = new MustardError('Runtime', 'failed', new Error('cause'));
  void error.cause;
}
void compat;
