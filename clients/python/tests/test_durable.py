"""Durable against a real sidecar: stores, a sidecar killed under a
resume, a host killed inside a tool."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest

import mustard_sidecar as ms

# The guest keeps its pages, so each snapshot is the journal of the last
# plus what the step added (a checkpoint's image would be larger).
PROGRAM = """
const seen = [];
for (let i = 0; i < 5; i++) {
  const page = fetch_page(i);
  seen.push(page);
  console.log("page", i);
}
seen.map((p) => p.slice(0, 6)).join(",")
"""
EXPECTED = ",".join(f"page{i}-" for i in range(5))


def page(i):
    return f"page{int(i)}-" + "x" * 20_000


def texts(logs):
    return [line["text"] for line in logs]


class Stop(BaseException):
    """What a host that stops between steps looks like to run: its tool
    never returns."""


class DurableTest(unittest.TestCase):
    def setUp(self):
        self.sc = ms.Sidecar()
        self.addCleanup(self.sc.close)
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir, True)

    def counting(self, stop_at=None):
        calls = []

        def fetch_page(i):
            calls.append(int(i))
            if stop_at is not None and len(calls) == stop_at + 1:
                raise Stop()
            return page(i)
        return calls, {"fetch_page": fetch_page}

    def test_a_guest_that_drops_its_pages_is_stored_as_a_checkpoint(self):
        # Each large answer the guest drops brings a snapshot that begins
        # with a heap image: stored whole (it extends nothing), a few
        # hundred bytes, and continued from after a stop.
        program = "let n = 0; for (let i = 0; i < 5; i++) n += fetch_page(i).length; n"
        store = ms.DirStore(self.dir)
        calls, tools = self.counting(stop_at=3)
        with self.assertRaises(Stop):
            ms.Durable(self.sc, store).run("job-c", program, tools)
        _, snapshot = store.load("job-c")
        self.assertLess(len(snapshot), 2048)
        self.assertGreater(store.rewrites, 1)
        calls2, tools2 = self.counting()
        done = ms.Durable(self.sc, store).run("job-c", program, tools2)
        self.assertEqual(done.value, 5 * len(page(0)))
        self.assertEqual((calls, calls2), ([0, 1, 2, 3], [3, 4]))

    def test_a_finished_execution_returns_its_result_and_runs_nothing(self):
        store = ms.MemoryStore()
        calls, tools = self.counting()
        first = ms.Durable(self.sc, store).run("job-1", PROGRAM, tools)
        self.assertEqual((first.value, len(first.logs)), (EXPECTED, 5))
        again = ms.Durable(self.sc, store).run("job-1", PROGRAM, {})
        self.assertEqual((again.value, again.logs), (first.value, first.logs))
        self.assertEqual(calls, [0, 1, 2, 3, 4])

    def test_a_stopped_run_continues_from_the_store_and_appends_to_it(self):
        store = ms.DirStore(self.dir)
        calls, tools = self.counting(stop_at=3)
        with self.assertRaises(Stop):
            ms.Durable(self.sc, store).run("job-2", PROGRAM, tools)
        checkpoint, snapshot = store.load("job-2")
        self.assertEqual(checkpoint["status"], "running")
        self.assertEqual([ms.from_structured(a) for a in checkpoint["state"]["args"]], [3.0])
        self.assertEqual(texts(checkpoint["logs"]), ["page 0", "page 1", "page 2"])
        snap = os.path.join(self.dir, "job-2.snap")
        self.assertEqual(os.path.getsize(snap), len(snapshot))
        self.assertEqual(store.rewrites, 1)  # the first step's; the others appended

        # A crash between an append and its commit leaves bytes past the
        # committed length: never read, cut off by the next append.
        with open(snap, "ab") as f:
            f.write(b"torn tail")
        self.assertEqual(store.load("job-2")[1], snapshot)

        with ms.Sidecar() as other:  # another process: a cold resume from the stored bytes
            calls2, tools2 = self.counting()
            result = ms.Durable(other, store).run("job-2", PROGRAM, tools2)
        self.assertEqual(result.value, EXPECTED)
        self.assertEqual(texts(result.logs), [f"page {i}" for i in range(5)])
        self.assertEqual(calls2, [3, 4])  # the call it stopped in, made again, then the rest
        self.assertEqual(store.rewrites, 1)
        self.assertFalse(os.path.exists(snap))  # done: only the result is kept
        self.assertEqual(store.load("job-2")[0]["status"], "done")

    def test_a_snapshot_that_does_not_match_its_checkpoint_is_a_store_error(self):
        store = ms.DirStore(self.dir)
        _, tools = self.counting(stop_at=2)
        with self.assertRaises(Stop):
            ms.Durable(self.sc, store).run("job-3", PROGRAM, tools)
        snap = os.path.join(self.dir, "job-3.snap")
        with open(snap, "r+b") as f:
            f.seek(os.path.getsize(snap) // 2)
            b = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([b[0] ^ 1]))
        with self.assertRaises(ms.StoreError):
            ms.Durable(self.sc, store).run("job-3", PROGRAM, tools)
        with self.assertRaises(ValueError):
            store.load("../job-3")

    def test_a_guest_failure_is_stored_and_raised_again(self):
        store = ms.MemoryStore()
        src = 'fetch_page(0); console.log("before"); throw new TypeError("bad page")'
        calls, tools = self.counting()
        with self.assertRaises(ms.GuestError) as first:
            ms.Durable(self.sc, store).run("job-4", src, tools)
        with self.assertRaises(ms.GuestError) as again:
            ms.Durable(self.sc, store).run("job-4", src, tools)
        self.assertEqual((again.exception.kind, again.exception.message, again.exception.logs),
                         (first.exception.kind, first.exception.message, first.exception.logs))
        self.assertEqual((first.exception.kind, texts(first.exception.logs)), ("Runtime", ["before"]))
        self.assertEqual(calls, [0])

    def test_a_sidecar_killed_under_a_resume_is_replaced_and_no_tool_runs_twice(self):
        with ms.SidecarPool(1) as pool:
            calls = []

            def fetch_page(i):
                calls.append(int(i))
                if int(i) == 2:  # the process that will read this answer dies first
                    os.kill(pool._slots[0].pid, signal.SIGKILL)
                    pool._slots[0]._proc.wait()
                return page(i)
            first = pool.start("1").home.pid
            result = ms.Durable(pool, ms.MemoryStore()).run("job-5", PROGRAM, {"fetch_page": fetch_page})
            self.assertNotEqual(pool._slots[0].pid, first)
        self.assertEqual(result.value, EXPECTED)
        self.assertEqual(calls, [0, 1, 2, 3, 4])

    def test_one_run_of_an_execution_at_a_time(self):
        for store in (ms.MemoryStore(), ms.DirStore(self.dir)):
            inside, release = threading.Event(), threading.Event()
            calls, first, waited = [], [], []

            def fetch_page(i):
                calls.append(int(i))
                if int(i) == 1:
                    inside.set()
                    release.wait(30)
                return page(i)
            with ms.SidecarPool(2) as pool:
                run = threading.Thread(target=lambda: first.append(
                    ms.Durable(pool, store).run("job-7", PROGRAM, {"fetch_page": fetch_page})))
                run.start()
                self.assertTrue(inside.wait(30))
                with self.assertRaises(ms.ExecutionBusy):
                    ms.Durable(pool, store).run("job-7", PROGRAM, {"fetch_page": fetch_page})
                waiter = threading.Thread(target=lambda: waited.append(
                    ms.Durable(pool, store).run("job-7", PROGRAM, {}, wait=True)))
                waiter.start()
                release.set()
                run.join(60)
                waiter.join(60)
            self.assertEqual([r.value for r in first + waited], [EXPECTED, EXPECTED])
            self.assertEqual(calls, [0, 1, 2, 3, 4])

    def test_a_host_killed_inside_a_tool_continues_in_a_new_host(self):
        log = os.path.join(self.dir, "calls.log")
        script = textwrap.dedent(f"""
            import os, sys
            sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r})
            import mustard_sidecar as ms

            def fetch_page(i):
                with open({log!r}, "a") as f:
                    f.write(f"{{int(i)}}\\n")
                if int(i) == 3 and os.environ.get("DIE") == "1":
                    os._exit(9)  # the host dies in the middle of a tool call
                return "page%d-" % int(i) + "x" * 20_000

            with ms.SidecarPool(2) as pool:
                r = ms.Durable(pool, ms.DirStore({self.dir!r})).run("job-6", {PROGRAM!r}, {{"fetch_page": fetch_page}})
            print(r.value)
        """)
        env = dict(os.environ, DIE="1")
        first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(first.returncode, 9, first.stderr)
        env["DIE"] = "0"
        second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertEqual(second.stdout.strip(), EXPECTED)
        with open(log) as f:
            self.assertEqual(f.read().split(), ["0", "1", "2", "3", "3", "4"])  # the call it died in, made again
        # The dead host held the execution's lock; its end let it go.


if __name__ == "__main__":
    unittest.main()
