"""A mustard-sidecar host: one sidecar process over binary frames
(docs/protocol.md), standard library only."""

import base64
import collections
import concurrent.futures
import copy
import hashlib
import hmac
import json
import os
import secrets
import shutil
import struct
import subprocess
import threading

from .values import UNDEFINED, from_structured, to_structured

__all__ = [
    "Sidecar", "Program", "Step", "Call", "Result", "MustardError", "GuestError", "ProcessError",
    "find_sidecar", "snapshot_auth",
]

PROTOCOL_VERSION = 2
MAX_REQUEST = 1 << 20  # the sidecar ends the session on a larger request
MAX_RESPONSE = (64 << 20) + (1 << 20)  # the largest snapshot plus room for the header
STAGE_CHUNK = MAX_REQUEST - 4096  # a stage request's header is far under 4 KiB
# A value whose JSON is larger goes through a stage rather than the request
# (docs/protocol.md, "Values past 1 MiB"); so do snapshot bytes that would
# not fit beside the rest of a request.
STAGE_VALUE = 256 << 10
GUEST_KINDS = ("Parse", "Validation", "Runtime", "Limit", "Serialization")
# A cached resume that fails with one of these is sent again with the bytes.
_NOT_HELD = {"unknown_snapshot_id", "evicted_snapshot_id", "unknown_policy_id", "evicted_policy_id"}


class MustardError(Exception):
    """A request the sidecar answered with ok: false. code is its
    error_code (branch on it, never on the text); logs are the console
    lines the failed segment wrote."""

    def __init__(self, message, code=None, logs=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.logs = logs or []


class GuestError(MustardError):
    """A failure of the guest's program: kind is Parse, Validation, Runtime,
    Limit or Serialization, the prefix of the message."""

    def __init__(self, message, code=None, logs=None):
        super().__init__(message, code, logs)
        self.kind = message.split(":", 1)[0]


class ProcessError(MustardError):
    """The sidecar could not start, exited, or broke the framing."""


def find_sidecar():
    """The sidecar binary: $MUSTARD_SIDECAR_BIN, else mustard-sidecar on PATH."""
    path = os.environ.get("MUSTARD_SIDECAR_BIN") or shutil.which("mustard-sidecar")
    if not path:
        raise ProcessError("no sidecar: set MUSTARD_SIDECAR_BIN or put mustard-sidecar on PATH "
                           "(go install ./cmd/mustard-sidecar)")
    return path


def snapshot_auth(key, snapshot_id):
    """What proves the host accepted a snapshot: its id signed with the key
    (docs/protocol.md, "Authentication")."""
    return {
        "snapshot_key_base64": base64.b64encode(key).decode(),
        "snapshot_key_digest": hashlib.sha256(key).hexdigest(),
        "snapshot_token": hmac.new(key, snapshot_id.encode("ascii"), hashlib.sha256).hexdigest(),
    }


class Program:
    """A compiled program: its id (SHA-256 of the bytes) and bytes."""

    __slots__ = ("id", "bytes")

    def __init__(self, program_id, program_bytes):
        self.id = program_id
        self.bytes = program_bytes

    def __repr__(self):
        return f"Program({self.id[:16]}…, {len(self.bytes)} bytes)"


Call = collections.namedtuple("Call", "call_id capability args")
Call.__doc__ = """An outstanding capability call of a batch-mode step."""


class Step:
    """Where a start or resume stopped.

    completed: value is the result. Suspended: capability and args are the
    call the guest waits on (in batch mode the oldest; calls lists every
    outstanding one); snapshot (bytes), snapshot_id and policy are what a
    host stores to resume it later, in any process (state() and
    from_state()); extends is the id of the snapshot whose bytes these
    continue, when the sidecar sent only what the step added (a store can
    append). logs are the console lines of the segment.
    """

    def __init__(self, result, payload, policy, sealed=False, base=None):
        step = result["step"]
        self.type = step["type"]
        self.logs = step.get("logs", [])
        self.policy = policy
        self.sealed = sealed
        self.home = None  # the Sidecar that produced it, which may hold it
        self.value = UNDEFINED
        self.capability = None
        self.args = []
        self.calls = []
        self.snapshot = None
        self.snapshot_id = None
        self.policy_id = None
        self.extends = None  # the id of the snapshot these bytes extend, when they came as a delta
        self._sha = None
        if self.type == "completed":
            self.value = from_structured(step["value"])
            return
        self.capability = step["capability"]
        self.args = [from_structured(a) for a in step["args"]]
        self.calls = [Call(c["call_id"], c["capability"], [from_structured(a) for a in c["args"]])
                      for c in step.get("calls", [])]
        self.snapshot_id = result["snapshot_id"]
        self.policy_id = result.get("policy_id")
        self.extends = extends = result.get("snapshot_base_id")
        if extends is None:
            self.snapshot = payload
            self._sha = hashlib.sha256(payload)
        elif base is not None and extends == base.snapshot_id:
            # A delta: the resumed snapshot's bytes, then these. Hashing
            # goes on from the resumed snapshot's state, so a step costs
            # what it adds, not the whole history.
            self.snapshot = base.snapshot + payload
            self._sha = base._sha.copy()
            self._sha.update(payload)
        else:
            raise ProcessError(f"snapshot delta extends {extends}, not the resumed snapshot")
        if self._sha.hexdigest() != self.snapshot_id:
            raise ProcessError("snapshot bytes do not hash to snapshot_id")

    @property
    def suspended(self):
        return self.type == "suspended"

    def state(self):
        """A JSON-ready dict of what resuming this step needs, to store. It
        shares nothing with the step: changing it changes no step."""
        if not self.suspended:
            raise ValueError("a completed step has nothing to resume")
        state = {"snapshot_base64": base64.b64encode(self.snapshot).decode(),
                 "snapshot_id": self.snapshot_id, "policy": copy.deepcopy(self.policy), "sealed": self.sealed,
                 "capability": self.capability, "args": [to_structured(a) for a in self.args]}
        if self.calls:
            state["calls"] = [{"call_id": c.call_id, "capability": c.capability,
                               "args": [to_structured(a) for a in c.args]} for c in self.calls]
        return state

    @classmethod
    def from_state(cls, state):
        """The step state() stored; resuming it sends its bytes."""
        snapshot = base64.b64decode(state["snapshot_base64"], validate=True)
        step = {"type": "suspended", "capability": state["capability"], "args": state["args"]}
        if "calls" in state:
            step["calls"] = state["calls"]
        result = {"step": step, "snapshot_id": state["snapshot_id"]}
        return cls(result, snapshot, copy.deepcopy(state["policy"]), bool(state.get("sealed")))

    def __repr__(self):
        if self.suspended:
            return f"Step(suspended {self.capability}{tuple(self.args)!r}, snapshot {self.snapshot_id[:16]}…)"
        return f"Step(completed {self.value!r})"


class Result:
    """What run returns: the program's value and every console line."""

    __slots__ = ("value", "logs")

    def __init__(self, value, logs):
        self.value = value
        self.logs = logs

    def __repr__(self):
        return f"Result({self.value!r}, {len(self.logs)} log lines)"


class Sidecar:
    """One sidecar process. Requests from several threads are written one at
    a time and answered in order, each thread getting its own response;
    cancel() stops the ones running.

    key is the host's snapshot key (at least 32 bytes), with which every
    resume signs its snapshot id; a random one by default. A sidecar
    started with --snapshot-key-file accepts only its pinned key.

    seal_key (at least 32 bytes, kept by the host, never in a snapshot)
    seals the snapshots of every execution this object starts, so that
    stored bytes show only their sizes (docs/protocol.md, "Sealed
    snapshots"); resuming a sealed step needs the same seal_key.

    argv is the command (find_sidecar() by default) and env its
    environment."""

    def __init__(self, argv=None, *, key=None, seal_key=None, env=None):
        if key is None:
            key = secrets.token_bytes(32)
        if not isinstance(key, (bytes, bytearray)) or len(key) < 32:
            raise ValueError("key must be at least 32 bytes")
        self.key = bytes(key)
        if seal_key is not None and (not isinstance(seal_key, (bytes, bytearray)) or len(seal_key) < 32):
            raise ValueError("seal_key must be at least 32 bytes")
        self.seal_key = bytes(seal_key) if seal_key is not None else None
        self._argv = list(argv) if argv else [find_sidecar()]
        # Requests are written one at a time (_wlock) and their responses,
        # which come in request order, read in that order (_rcond), so a
        # cancel can be written while another thread waits for the
        # response of what it cancels.
        self._wlock = threading.Lock()
        self._rcond = threading.Condition()
        self._mu = threading.Lock()  # _running
        self._next_id = 0  # the last request written
        self._next_read = 1  # the request whose response is read next
        self._running = set()  # start and resume requests not yet answered
        self._stage = 0
        self._closed = False
        self._broken = None  # why the stream can no longer be used
        try:
            self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        except OSError as e:
            raise ProcessError(f"starting the sidecar failed: {e.strerror}") from None

    @property
    def pid(self):
        """The sidecar's process id."""
        return self._proc.pid

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # The wire.

    def call(self, method, raw=b"", **fields):
        """Sends one request (raw travels as the frame's payload) and
        returns (result, payload bytes). Raises GuestError or MustardError
        for ok: false, ProcessError if the process is gone."""
        with self._wlock:
            if self._broken or self._closed:
                raise ProcessError(self._broken or "the sidecar is closed")
            rid = self._next_id + 1
            h = _json({"protocol_version": PROTOCOL_VERSION, "id": rid, "method": method, **fields})
            if len(h) + len(raw) + 8 > MAX_REQUEST:
                raise MustardError(f"{method} request of {len(h) + len(raw)} bytes is over the 1 MiB limit",
                                   "request_too_large")
            try:
                self._proc.stdin.write(struct.pack("<II", len(h), len(raw)) + h + raw)
                self._proc.stdin.flush()
            except (OSError, ValueError):
                self._break("the sidecar broke the stream")
                raise ProcessError(self._broken) from None
            self._next_id = rid
            if method in ("start", "resume"):
                with self._mu:
                    self._running.add(rid)
        try:
            resp, body = self._response(rid)
        finally:
            with self._mu:
                self._running.discard(rid)
        if not resp.get("ok"):
            message = resp.get("error", "")
            cls = GuestError if message.split(":", 1)[0] in GUEST_KINDS else MustardError
            raise cls(message, resp.get("error_code"), resp.get("logs"))
        return resp["result"], body

    def _response(self, rid):
        """Reads the response to request rid, after those before it."""
        with self._rcond:
            while self._next_read != rid and not self._broken:
                self._rcond.wait()
            if self._broken:
                raise ProcessError(self._broken)
            try:
                hl, pl = struct.unpack("<II", self._read(8))
                if hl + pl > MAX_RESPONSE:  # never allocate what a broken process claims
                    raise ProcessError(f"response of {hl + pl} bytes is over the bound")
                resp = json.loads(self._read(hl))
                body = self._read(pl)
                if resp.get("id") != rid:
                    raise ProcessError(f"response id {resp.get('id')} does not answer request {rid}")
            except (OSError, ValueError, ProcessError) as e:
                self._break(e.args[0] if isinstance(e, ProcessError) else "the sidecar broke the stream")
                raise ProcessError(self._broken) from None
            self._next_read = rid + 1
            self._rcond.notify_all()
            return resp, body

    def _break(self, why):
        """The stream is lost: the process is killed and every waiting
        request fails with why."""
        with self._rcond:
            self._broken = self._broken or why
            self._proc.kill()
            self._rcond.notify_all()

    def _read(self, n):
        data = self._proc.stdout.read(n)
        if len(data) != n:
            try:
                code = self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # its stdout closed, the process lingers
                self._proc.kill()
                code = self._proc.wait()
            raise ProcessError(f"the sidecar exited (status {code}) in the middle of a response")
        return data

    def cancel(self):
        """Stops every start and resume of this Sidecar in flight (sent
        from other threads), without stopping the process: each ends with
        GuestError "Limit: execution cancelled" (code limit_cancelled),
        its execution over. Snapshots made before stay resumable. Returns
        how many it stopped."""
        with self._mu:
            targets = sorted(self._running)
        stopped = 0
        for target in targets:
            result, _ = self.call("cancel", target_id=target)
            stopped += bool(result.get("was_running"))
        return stopped

    def close(self):
        """EOF on stdin: the sidecar answers what it read (to the threads
        waiting for it) and exits."""
        with self._wlock:
            self._closed = True
            try:
                self._proc.stdin.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        with self._rcond:  # what it answered is read by the threads that wait for it
            while self._next_read <= self._next_id and not self._broken:
                self._rcond.wait()
            self._broken = self._broken or "the sidecar is closed"
            self._rcond.notify_all()
        self._proc.stdout.close()

    def kill(self):
        """Ends the process at once, as a crash would."""
        self._break("the sidecar was killed")
        self._proc.wait()
        with self._wlock:
            for f in (self._proc.stdin, self._proc.stdout):
                try:
                    f.close()
                except (OSError, ValueError):
                    pass

    # The protocol.

    def ping(self):
        result, _ = self.call("ping")
        return result

    def compile(self, source, *, language="javascript"):
        """Compiles guest source ("javascript" or "typescript")."""
        fields = {"source": source}
        if len(source) > STAGE_VALUE:
            fields = {"source_stage_id": self._upload(source.encode("utf-8"))}
        if language != "javascript":
            fields["language"] = language
        result, program = self.call("compile", **fields)
        if hashlib.sha256(program).hexdigest() != result["program_id"]:
            raise ProcessError("program bytes do not hash to program_id")
        return Program(result["program_id"], program)

    def start(self, program, *, inputs=None, capabilities=(), limits=None, console="off", entry="script",
              host_calls="one"):
        """Starts a program (a Program or its JavaScript source) and runs it
        to its first capability call or its end. inputs is a dict of global
        bindings; capabilities are the names the guest may call (dotted
        names are functions in namespaces); limits as in docs/protocol.md
        ("Limits"), the defaults where absent. host_calls "batch" lists
        every outstanding call in Step.calls, to answer any of them at
        once (resume's answers)."""
        if isinstance(program, str):
            program = self.compile(program)
        policy = {"capabilities": sorted(set(capabilities)), "limits": dict(limits or {})}
        if console != "off":
            policy["console"] = console
        if host_calls != "one":
            policy["host_calls"] = host_calls
        inputs_json = _json({k: to_structured(v) for k, v in (inputs or {}).items()})

        def options():
            # Made for each request: every stage a request names is dropped
            # by it, so a second request stages the inputs again.
            o = {**policy}
            if self.seal_key is not None:
                o["seal_key_base64"] = base64.b64encode(self.seal_key).decode()
            if len(inputs_json) > STAGE_VALUE:
                o["inputs_stage_id"] = self._upload(inputs_json)
            else:
                o["inputs"] = json.loads(inputs_json)
            if entry != "script":
                o["entry"] = entry
            return o
        try:
            result, payload = self.call("start", program_id=program.id, options=options())
        except MustardError as e:
            if e.code not in ("unknown_program_id", "evicted_program_id"):
                raise
            # Compiled by another process, or evicted here: send the bytes.
            o = options()
            if len(program.bytes) + len(_json(o)) + 4096 > MAX_REQUEST:
                result, payload = self.call("start", program_stage_id=self._upload(program.bytes), options=o)
            else:
                result, payload = self.call("start", program.bytes, options=o)
        return self._step(result, payload, policy, self.seal_key is not None)

    def _step(self, result, payload, policy, sealed, base=None):
        step = Step(result, payload, policy, sealed, base)
        step.home = self
        return step

    def resume(self, step, value=UNDEFINED, *, error=None, answers=None):
        """Answers the call step waits on with value, or with error (an
        exception, or a dict of name, message, code, details) that the
        guest can catch. In batch mode, answers maps call ids to values
        instead (an exception as a value is sent as an error), any subset
        of step.calls, applied in the dict's order. A step this Sidecar
        produced resumes by id, hot, or with its bytes if the process has
        let it go; any other (another process, Step.from_state) sends its
        bytes and policy, cold. Both give the same next step."""
        if not step.suspended:
            raise ValueError("a completed step cannot be resumed")
        if answers is None:
            return self._resume(step, [(None, _json(_payload(value, error)))])
        if not answers:
            raise ValueError("answers must name at least one call")
        return self._resume(step, [(call_id, _json(_payload(v, v if isinstance(v, BaseException) else None)))
                                   for call_id, v in answers.items()])

    def _resume(self, step, payloads):
        """resume with its answers as JSON: (None, payload) in one mode,
        (call_id, payload) for each answer in batch mode."""
        inline = sum(len(p) for _, p in payloads if len(p) <= STAGE_VALUE)
        auth = snapshot_auth(self.key, step.snapshot_id)
        if step.sealed:
            if self.seal_key is None:
                raise ValueError("the step is sealed: resume it with a Sidecar given its seal_key")
            auth["seal_key_base64"] = base64.b64encode(self.seal_key).decode()
        if step.policy_id is not None and step.home is self:
            try:
                result, body = self.call("resume", snapshot_id=step.snapshot_id, policy_id=step.policy_id,
                                         auth=auth, snapshot_delivery="delta", **self._answers(payloads, inline))
                return self._step(result, body, step.policy, step.sealed, step)
            except MustardError as e:
                if e.code not in _NOT_HELD:
                    raise
        policy = {**step.policy, "snapshot_id": step.snapshot_id, **auth}
        fields = self._answers(payloads, inline)
        if len(step.snapshot) + inline + STAGE_VALUE > MAX_REQUEST:
            result, body = self.call("resume", stage_id=self._upload(step.snapshot), policy=policy,
                                     snapshot_delivery="delta", **fields)
        else:
            result, body = self.call("resume", step.snapshot, policy=policy, snapshot_delivery="delta", **fields)
        return self._step(result, body, step.policy, step.sealed, step)

    def _answers(self, payloads, inline):
        """The resume fields carrying the answers' JSON: each inline, or
        staged when large or when the inline ones together would not fit.
        Every stage a request names is dropped by it, so a retry stages
        again."""
        def field(p):
            if len(p) > STAGE_VALUE or inline > STAGE_VALUE:
                return {"payload_stage_id": self._upload(p)}
            return {"payload": json.loads(p)}
        if payloads[0][0] is None:
            return field(payloads[0][1])
        return {"answers": [{"call_id": call_id, **field(p)} for call_id, p in payloads]}

    def _upload(self, data):
        """Stages bytes too large for one request; returns the stage's id."""
        with self._wlock:
            self._stage += 1
            stage_id = f"py-{self._stage}"
        for off in range(0, max(len(data), 1), STAGE_CHUNK):  # an empty stage still starts
            self.call("stage", data[off:off + STAGE_CHUNK], stage_id=stage_id, offset=off)
        return stage_id

    def run(self, program, tools, *, inputs=None, limits=None, language="javascript", console="collect",
            entry="script", on_log=None, parallel=1):
        """Runs a program to its end, calling tools[name](*args) for each
        capability call: code mode in one call. An exception a tool raises
        reaches the guest as a catchable Error of its class name. With
        parallel > 1, the calls the guest has outstanding at once (a
        Promise.all) run on up to that many threads and are answered in one
        resume (batch mode). Returns Result(value, logs); a failure raises
        GuestError with the logs so far."""
        if isinstance(program, str):
            program = self.compile(program, language=language)
        logs = []

        def keep(lines):
            logs.extend(lines)
            if on_log:
                for line in lines:
                    on_log(line)
        try:
            step = self.start(program, inputs=inputs, capabilities=tools.keys(), limits=limits,
                              console=console, entry=entry, host_calls="batch" if parallel > 1 else "one")
            keep(step.logs)
            step = _drive(self, step, tools, keep, parallel)
            return Result(step.value, logs)
        except MustardError as e:
            keep(e.logs)
            e.logs = logs
            raise


def _answer(tools, capability, args):
    """A call's answer as the JSON a resume sends, converted once. An
    exception the tool raises is the guest's to catch, and so is a value
    that cannot cross."""
    try:
        return _json(_payload(tools[capability](*args), None))
    except Exception as e:
        return _json(_payload(None, e))


def _drive(target, step, tools, keep, parallel=1, saved=None):
    """Answers step's calls with tools until its program ends and returns
    the completed step. target resumes (a Sidecar or a SidecarPool); keep
    takes each later step's logs; saved(step) is called with each
    suspended step after it is made, before its calls run (a batch-mode
    step's are run on up to parallel threads and answered at once)."""
    pool = concurrent.futures.ThreadPoolExecutor(parallel) if parallel > 1 else None
    try:
        while step.suspended:
            if saved:
                saved(step)
            if pool:
                futures = [(c.call_id, pool.submit(_answer, tools, c.capability, c.args)) for c in step.calls]
                step = target._resume(step, [(i, f.result()) for i, f in futures])
            else:
                step = target._resume(step, [(None, _answer(tools, step.capability, step.args))])
            keep(step.logs)
        return step
    finally:
        if pool:
            pool.shutdown(wait=False)


def _json(v):
    """Compact JSON as UTF-8. A string holding a lone surrogate (a guest
    string can) has no UTF-8: the text is then escaped to ASCII, and the
    sidecar reads the escape as the surrogate itself."""
    try:
        return json.dumps(v, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(v, separators=(",", ":"), allow_nan=False).encode("ascii")


def _payload(value, error):
    if error is None:
        return {"type": "value", "value": to_structured(value)}
    if isinstance(error, BaseException):
        error = {"name": type(error).__name__, "message": str(error)}
    out = {k: error[k] for k in ("name", "message", "code") if error.get(k) is not None}
    if "details" in error:
        out["details"] = to_structured(error["details"])
    return {"type": "error", "error": out}
