"""Executions that survive crashes: Durable runs a program to its end like
Sidecar.run, and stores a checkpoint after every step in a store, so that
a run that stopped (the host died, its sidecar died) continues where it
was, in any process, from what the store holds."""

import base64
import contextlib
import hashlib
import json
import os
import re
import threading
import time

try:
    import fcntl
except ImportError:  # not on Unix: DirStore cannot lock
    fcntl = None

from .client import GuestError, MustardError, ProcessError, Result, Step, _drive
from .pool import SidecarPool
from .values import to_structured, from_structured

__all__ = ["Durable", "MemoryStore", "DirStore", "StoreError", "ExecutionBusy"]


class StoreError(Exception):
    """A store could not read or write a checkpoint (what it read is not
    what was written, or the file system failed)."""


class ExecutionBusy(Exception):
    """Another run holds the execution."""


class Durable:
    """Runs executions to their end on target (a Sidecar or a SidecarPool),
    saving a checkpoint in store after every step.

    run(execution_id, program, tools, ...) takes Sidecar.run's arguments.
    With no checkpoint under execution_id it starts the program; with one
    it continues from it: a finished execution returns its result (or
    raises its GuestError) without running anything, one that stopped
    between steps answers the call it was waiting on and goes on. Inputs,
    limits and the program are the first run's (the snapshot holds them).

    Each tool call is answered once while the host lives. A sidecar that
    dies under a resume is replaced by the pool and the resume is sent
    again with the same answers (retries times), so no tool is called
    again for it. A host that dies is another matter: the call it was
    running when it died is made again by the run that continues the
    execution (at least once, as any durable executor without the tool's
    help).

    One run of an execution at a time: a store with a lock(execution_id,
    wait) method (MemoryStore, and DirStore on Unix) holds the execution
    for the whole run. Another run of it raises ExecutionBusy, or with
    wait=True waits for the first to end and then returns its result (or
    continues where it stopped)."""

    def __init__(self, target, store, *, retries=2):
        self.target = target
        self.store = store
        self.retries = retries

    def run(self, execution_id, program, tools, *, inputs=None, limits=None, language="javascript",
            console="collect", entry="script", on_log=None, parallel=1, wait=False):
        lock = getattr(self.store, "lock", None)
        with lock(execution_id, wait) if lock else contextlib.nullcontext():
            return self._run(execution_id, program, tools, inputs, limits, language, console, entry, on_log,
                             parallel)

    def _run(self, execution_id, program, tools, inputs, limits, language, console, entry, on_log, parallel):
        stored = self.store.load(execution_id)
        if stored is not None:
            checkpoint, snapshot = stored
            logs = list(checkpoint.get("logs", []))
            if checkpoint["status"] == "done":
                return Result(from_structured(checkpoint["value"]), logs)
            if checkpoint["status"] == "failed":
                e = checkpoint["error"]
                raise GuestError(e["message"], e.get("code"), logs)
            step = Step.from_state({**checkpoint["state"],
                                    "snapshot_base64": base64.b64encode(snapshot).decode()})
        else:
            logs = []
            step = None

        def keep(lines):
            logs.extend(lines)
            if on_log:
                for line in lines:
                    on_log(line)
        held = step.snapshot_id if step is not None else None

        def saved(step):
            if step.snapshot_id == held:
                return  # the step the store holds: nothing new to save
            state = step.state()
            del state["snapshot_base64"]
            # A step made from a delta extends its base's bytes: a store
            # that holds those appends what the step added.
            self.store.save(execution_id, {"status": "running", "state": state, "logs": logs,
                                           "updated": time.time()},
                            step.snapshot, extends=step.extends)
        target = _Retrying(self.target, self.retries)
        try:
            if step is None:
                if isinstance(program, str):
                    program = self.target.compile(program, language=language)
                step = self.target.start(program, inputs=inputs, capabilities=tools.keys(), limits=limits,
                                         console=console, entry=entry,
                                         host_calls="batch" if parallel > 1 else "one")
                keep(step.logs)
            step = _drive(target, step, tools, keep, parallel, saved)
        except GuestError as e:
            keep(e.logs)
            self.store.save(execution_id, {"status": "failed", "logs": logs, "updated": time.time(),
                                           "error": {"kind": e.kind, "message": e.message, "code": e.code}})
            e.logs = logs
            raise
        except MustardError as e:
            keep(e.logs)
            e.logs = logs
            raise
        self.store.save(execution_id, {"status": "done", "value": to_structured(step.value), "logs": logs,
                                       "updated": time.time()})
        return Result(step.value, logs)


class _Retrying:
    """target's resume, sent again when the process under it died: a pool
    replaces a dead process, and the step resumes cold from its bytes with
    the same answers."""

    def __init__(self, target, retries):
        self.target = target
        self.retries = retries

    def _resume(self, step, payloads):
        for attempt in range(self.retries + 1):
            try:
                return self.target._resume(step, payloads)
            except ProcessError:
                if attempt == self.retries or not isinstance(self.target, SidecarPool):
                    raise  # the last try, or a lone Sidecar, which stays broken


class MemoryStore:
    """Checkpoints in this process's memory: for tests, and for hosts that
    keep executions only as long as they live."""

    def __init__(self):
        self._mu = threading.Lock()
        self._items = {}
        self._held = {}  # execution id -> the lock its run holds

    @contextlib.contextmanager
    def lock(self, execution_id, wait=False):
        """Holds execution_id for one run in this process."""
        with self._mu:
            held = self._held.setdefault(execution_id, threading.Lock())
        if not held.acquire(blocking=wait):
            raise ExecutionBusy(f"execution {execution_id} is running")
        try:
            yield
        finally:
            held.release()

    def load(self, execution_id):
        """(checkpoint, snapshot bytes or None), or None if there is none."""
        with self._mu:
            item = self._items.get(execution_id)
        return None if item is None else (json.loads(item[0]), item[1])

    def save(self, execution_id, checkpoint, snapshot=None, extends=None):
        with self._mu:
            self._items[execution_id] = (json.dumps(checkpoint), snapshot)

    def delete(self, execution_id):
        with self._mu:
            self._items.pop(execution_id, None)


_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}\Z")


class DirStore:
    """Checkpoints in a directory, safe against a crash at any point: for
    each execution, ID.snap holds the snapshot's bytes and ID.json the
    checkpoint with the snapshot's length and id. A step whose snapshot
    extends the stored one appends what it adds to ID.snap and syncs it;
    replacing ID.json (written aside, synced, renamed) is the commit. Bytes
    past the committed length (a crash between the two) are cut off by the
    next append, and never read. Loading checks the bytes against the
    snapshot's id. Execution ids are 1-128 of [A-Za-z0-9_.-], not starting
    with a dot."""

    def __init__(self, path):
        self.path = path
        os.makedirs(path, exist_ok=True)
        self.rewrites = 0  # snapshot files written whole (the others were appended to)

    def _file(self, execution_id, ext):
        if not isinstance(execution_id, str) or not _ID.match(execution_id):
            raise ValueError(f"execution id {execution_id!r} is not 1-128 of [A-Za-z0-9_.-]")
        return os.path.join(self.path, execution_id + ext)

    def _meta(self, execution_id):
        path = self._file(execution_id, ".json")
        try:
            with open(path, "rb") as f:
                return json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise StoreError(f"checkpoint of {execution_id}: {e}") from None

    def load(self, execution_id):
        meta = self._meta(execution_id)
        if meta is None:
            return None
        n = meta.pop("snapshot_len", None)
        if n is None:
            return meta, None
        try:
            with open(self._file(execution_id, ".snap"), "rb") as f:
                snapshot = f.read(n)
        except OSError as e:
            raise StoreError(f"snapshot of {execution_id}: {e}") from None
        if len(snapshot) != n or hashlib.sha256(snapshot).hexdigest() != meta["state"]["snapshot_id"]:
            raise StoreError(f"snapshot of {execution_id} does not match its checkpoint")
        return meta, snapshot

    def save(self, execution_id, checkpoint, snapshot=None, extends=None):
        snap = self._file(execution_id, ".snap")
        meta = dict(checkpoint)
        try:
            if snapshot is not None:
                old = self._meta(execution_id) if extends is not None else None
                at = old.get("snapshot_len") if old else None
                if at is not None and old["state"]["snapshot_id"] == extends and at <= len(snapshot):
                    with open(snap, "r+b") as f:
                        f.truncate(at)
                        f.seek(at)
                        f.write(snapshot[at:])
                        f.flush()
                        os.fsync(f.fileno())
                else:
                    self._replace(snap, snapshot)
                    self.rewrites += 1
                meta["snapshot_len"] = len(snapshot)
            self._replace(self._file(execution_id, ".json"), json.dumps(meta).encode())
            if snapshot is None and os.path.exists(snap):
                os.remove(snap)
        except OSError as e:
            raise StoreError(f"saving {execution_id}: {e}") from None

    @contextlib.contextmanager
    def lock(self, execution_id, wait=False):
        """Holds execution_id for one run, across the processes that share
        the directory, with an flock on ID.lock: the kernel lets it go
        when its process ends, however it ends. (Unix only; a lock over
        NFS is only as good as the server's.) delete leaves ID.lock in
        place: removing a file a run waits on would let a third run lock a
        new one beside it."""
        if fcntl is None:
            yield
            return
        fd = os.open(self._file(execution_id, ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                raise ExecutionBusy(f"execution {execution_id} is running") from None
            yield
        finally:
            os.close(fd)  # and with it the lock

    def delete(self, execution_id):
        for ext in (".json", ".snap"):
            try:
                os.remove(self._file(execution_id, ext))
            except FileNotFoundError:
                pass

    def _replace(self, path, data):
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
