"""A pool of sidecar processes for a host that runs many executions at
once: each request goes to an idle process, a step's resume to the process
that holds it (hot) while it lives, and a process that died is replaced."""

import threading

from .client import ProcessError, Sidecar
from .values import UNDEFINED

__all__ = ["SidecarPool"]


class SidecarPool:
    """size sidecar processes, started when first needed. key and seal_key
    are shared by every process (so a step resumes in any of them);
    argv and env as for Sidecar.

    run, start and resume take Sidecar's arguments, each served by one
    idle process (a run by one for all its steps). A resume goes to the
    step's own process when that is idle, else to another, which resumes
    it from its bytes: the same next step either way."""

    def __init__(self, size=2, argv=None, *, key=None, seal_key=None, env=None):
        if size < 1:
            raise ValueError("size must be at least 1")
        first = Sidecar(argv, key=key, seal_key=seal_key, env=env)
        self._new = lambda: Sidecar(argv, key=first.key, seal_key=seal_key, env=env)
        self._cond = threading.Condition()
        self._slots = [first] + [None] * (size - 1)
        self._busy = [False] * size
        self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _acquire(self, home=None):
        """Waits for an idle process, preferring home; returns its index."""
        with self._cond:
            while True:
                if self._closed:
                    raise ProcessError("the pool is closed")
                order = list(range(len(self._slots)))
                if home is not None:  # its own process first, when idle
                    order.sort(key=lambda i: self._slots[i] is not home)
                for i in order:
                    if not self._busy[i]:
                        self._busy[i] = True
                        return i
                self._cond.wait()

    def _release(self, i):
        with self._cond:
            self._busy[i] = False
            self._cond.notify_all()  # an acquirer, or close

    def _with(self, home, fn):
        i = self._acquire(home)
        try:
            sc = self._slots[i]
            if sc is None or sc._broken:  # never started, or died: a new one
                if sc is not None:
                    sc.kill()
                sc = self._slots[i] = self._new()
            return fn(sc)
        finally:
            self._release(i)

    def run(self, program, tools, **kw):
        return self._with(None, lambda sc: sc.run(program, tools, **kw))

    def start(self, program, **kw):
        return self._with(None, lambda sc: sc.start(program, **kw))

    def resume(self, step, value=UNDEFINED, **kw):
        return self._with(step.home, lambda sc: sc.resume(step, value, **kw))

    def compile(self, source, **kw):
        """Compiles in an idle process; the Program starts in any."""
        return self._with(None, lambda sc: sc.compile(source, **kw))

    def _resume(self, step, payloads):
        return self._with(step.home, lambda sc: sc._resume(step, payloads))

    def cancel(self):
        """Stops every start, resume and run in flight on the pool's
        processes (Sidecar.cancel on each): each ends with GuestError
        "Limit: execution cancelled". Returns how many it stopped."""
        with self._cond:
            live = [sc for sc in self._slots if sc is not None and not sc._broken]
        stopped = 0
        for sc in live:
            try:
                stopped += sc.cancel()
            except ProcessError:
                pass  # died meanwhile: nothing of it runs
        return stopped

    def close(self):
        """Closes every process, after the requests in flight."""
        with self._cond:
            self._closed = True
            while any(self._busy):
                self._cond.wait()
            slots, self._slots = self._slots, []
            self._busy = []
        for sc in slots:
            if sc is not None:
                sc.close()
