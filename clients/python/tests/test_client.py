"""Against a real sidecar: $MUSTARD_SIDECAR_BIN, else mustard-sidecar on
PATH (clients/python/python_test.go builds one and runs this suite)."""

import base64
import json
import os
import random
import signal
import threading
import time
import unittest

import mustard_sidecar as ms

CODE_MODE = """async ({ city }: { city: string }) => {
  const w = await weather.current(city);
  console.log("got", w.temp, [1, 2]);
  let caught = "";
  try { await weather.alerts(city); } catch (e) { caught = `${e.name}: ${e.message}`; }
  console.warn(caught);
  return { city, temp: w.temp, caught };
}"""


def weather_tools(calls):
    def current(city):
        calls.append(("current", city))
        return {"temp": 21.5, "city": city}

    def alerts(city):
        calls.append(("alerts", city))
        raise LookupError(f"no alerts for {city}")
    return {"weather.current": current, "weather.alerts": alerts}


def step_bytes(state):
    return base64.b64decode(state["snapshot_base64"])


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.sc = ms.Sidecar()
        self.addCleanup(self.sc.close)

    def test_code_mode_runs_typescript_with_namespaced_tools_and_console(self):
        calls = []
        seen = []
        r = self.sc.run(CODE_MODE, weather_tools(calls), inputs={"city": "Oslo"}, language="typescript",
                        entry="call", on_log=seen.append)
        self.assertEqual(r.value, {"city": "Oslo", "temp": 21.5, "caught": "LookupError: no alerts for Oslo"})
        self.assertEqual(calls, [("current", "Oslo"), ("alerts", "Oslo")])
        self.assertEqual(r.logs, [{"level": "log", "text": "got 21.5 [ 1, 2 ]"},
                                  {"level": "warn", "text": "LookupError: no alerts for Oslo"}])
        self.assertEqual(seen, r.logs)

    def test_a_guest_failure_is_a_guest_error_with_its_logs(self):
        src = 'console.log("before"); const x = get(); null.boom;'
        with self.assertRaises(ms.GuestError) as cm:
            self.sc.run(src, {"get": lambda: 1})
        e = cm.exception
        self.assertEqual(e.kind, "Runtime")
        self.assertTrue(e.message.startswith("Runtime: TypeError"), e.message)
        self.assertEqual(e.logs, [{"level": "log", "text": "before"}])
        with self.assertRaises(ms.GuestError) as cm:
            self.sc.compile("let = ;")
        self.assertEqual(cm.exception.kind, "Parse")
        # The process serves on.
        self.assertEqual(self.sc.run("1 + 1", {}).value, 2.0)

    def test_a_limit_is_a_guest_error_of_kind_limit(self):
        with self.assertRaises(ms.GuestError) as cm:
            self.sc.run("for (;;) {}", {}, limits={"instruction_budget": 10000})
        self.assertEqual(cm.exception.kind, "Limit")
        self.assertTrue(cm.exception.code.startswith("limit"), cm.exception.code)

    def test_a_stored_step_resumes_in_another_process_as_it_does_hot(self):
        src = "const a = get(1); const b = get(a + 'x'); [a, b, Math.random() < 1]"
        program = self.sc.compile(src)
        hot = self.sc.start(program, capabilities=["get"])
        stored = json.dumps(hot.state())
        hot = self.sc.resume(self.sc.resume(hot, "one"), [2, ms.HOLE])
        self.assertEqual(hot.value, ["one", [2.0, ms.HOLE], True])

        self.sc.kill()
        with ms.Sidecar() as other:
            cold = ms.Step.from_state(json.loads(stored))
            self.assertEqual((cold.capability, cold.args), ("get", [1.0]))
            cold = other.resume(cold, "one")
            self.assertEqual((cold.capability, cold.args), ("get", ["onex"]))
            cold = other.resume(cold, [2, ms.HOLE])
            self.assertEqual(cold.value, hot.value)
        with self.assertRaises(ms.ProcessError):
            self.sc.ping()

    def test_a_resume_receives_only_what_its_snapshot_adds(self):
        answers = [random.Random(i).randbytes(30_000).hex() for i in range(6)]
        # The guest keeps its answers: its snapshots stay journals, each
        # the last plus what the step added.
        src = "let n = 0; const kept = []; for (let i = 0; i < 6; i++) { const r = get(i); kept.push(r); n += r.length; } n"
        received = []
        call = self.sc.call

        def recording(method, raw=b"", **fields):
            result, body = call(method, raw, **fields)
            received.append((method, result.get("snapshot_base_id"), len(body)))
            return result, body
        self.sc.call = recording
        step = self.sc.start(src, capabilities=["get"])
        states = [step.state()]
        for i in range(5):
            before = step
            step = self.sc.resume(step, answers[i])
            method, base, size = received[-1]
            self.assertEqual((method, base), ("resume", before.snapshot_id))
            self.assertEqual(step.snapshot[:len(before.snapshot)], before.snapshot)
            self.assertEqual(size, len(step.snapshot) - len(before.snapshot))
            states.append(step.state())
        self.assertGreater(len(step.snapshot), 5 * size)  # the history, received a step at a time
        self.assertEqual(self.sc.resume(step, answers[5]).value, 360_000.0)

        # Cold, from a stored state, the delta extends the bytes sent.
        with ms.Sidecar() as other:
            cold = other.resume(ms.Step.from_state(states[3]), answers[3])
            self.assertEqual((cold.snapshot_id, cold.snapshot), (states[4]["snapshot_id"], step_bytes(states[4])))

    def test_a_delta_on_another_snapshot_is_refused(self):
        step = self.sc.start("get() + get()", capabilities=["get"])
        other = self.sc.start("get(1)", capabilities=["get"])
        call = self.sc.call

        def rebased(method, raw=b"", **fields):
            result, body = call(method, raw, **fields)
            if result.get("snapshot_base_id"):
                result["snapshot_base_id"] = other.snapshot_id
            return result, body
        self.sc.call = rebased
        with self.assertRaisesRegex(ms.ProcessError, "not the resumed snapshot"):
            self.sc.resume(step, "a")

    def test_snapshots_and_answers_past_a_request_go_through_stages(self):
        big = base64.b64encode(random.Random(7).randbytes(1_125_000)).decode()  # 1.5 MB that compresses little
        limits = {"heap_limit_bytes": 64 << 20, "allocation_budget": 10_000_000}
        step = self.sc.start("const a = get(); const b = get(); a.length + b.length", capabilities=["get"],
                             limits=limits, inputs={"pad": "y" * 400_000})  # inputs past STAGE_VALUE
        step = self.sc.resume(step, big)
        self.assertGreater(len(step.snapshot), 1 << 20)
        stored = step.state()
        self.assertEqual(self.sc.resume(step, big).value, 3_000_000.0)
        with ms.Sidecar() as other:  # raw bytes past 1 MiB: staged
            self.assertEqual(other.resume(ms.Step.from_state(stored), "z").value, 1_500_001.0)

    def test_a_step_from_another_process_is_sent_with_its_bytes(self):
        step = self.sc.start("get() + 1", capabilities=["get"])
        with ms.Sidecar() as other:
            self.assertEqual(other.resume(step, 41).value, 42.0)
            # A step whose process let it go: the cached resume fails with
            # unknown_snapshot_id, and the bytes go instead.
            step.home = other
            self.assertEqual(other.resume(step, 1).value, 2.0)
        step.home = self.sc  # at home the execution is still parked
        self.assertEqual(self.sc.resume(step, 2).value, 3.0)

    def test_a_program_compiled_elsewhere_starts_from_its_bytes(self):
        program = self.sc.compile("get() * 2 + pad.length")
        with ms.Sidecar() as other:
            step = other.start(program, capabilities=["get"], inputs={"pad": ""})
            self.assertIs(step.home, other)
            self.assertEqual(other.resume(step, 21).value, 42.0)
            # Inputs past a request go through a stage, which the refused
            # first start drops: the second stages them again.
            program = self.sc.compile("get() + pad.length")
            step = other.start(program, capabilities=["get"], inputs={"pad": "p" * 400_000})
            self.assertEqual(other.resume(step, 1).value, 400_001.0)

    def test_wrong_answers_fail_before_the_guest_runs(self):
        step = self.sc.start("get()", capabilities=["get"])
        with self.assertRaises(TypeError):
            self.sc.resume(step, {1, 2})
        self.assertEqual(self.sc.resume(step, "ok").value, "ok")
        with self.assertRaises(ValueError):
            self.sc.resume(ms.Step({"step": {"type": "completed", "value": "Null"}}, b"", {}), 1)

    def test_requests_from_threads_each_get_their_own_response(self):
        program = self.sc.compile("const n = get(); n * 2")
        out = [None] * 8

        def work(i):
            step = self.sc.start(program, capabilities=["get"])
            out[i] = self.sc.resume(step, i).value
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(out, [2.0 * i for i in range(8)])

    def test_parallel_runs_the_outstanding_calls_at_once(self):
        # The three calls meet at a barrier: run sequentially, it would
        # break (its timeout bounds a hang only) and the guest would see
        # the error instead of the values.
        barrier = threading.Barrier(3, timeout=30)

        def slow(n):
            barrier.wait()
            return n * 10
        src = """async () => {
  const [a, b, c] = await Promise.all([t.slow(1), t.slow(2), t.slow(3)]);
  const d = await t.slow2(a + b + c);
  return [a, b, c, d];
}"""
        r = self.sc.run(src, {"t.slow": slow, "t.slow2": lambda x: x + 1}, entry="call", parallel=3)
        self.assertEqual(r.value, [10.0, 20.0, 30.0, 61.0])

    def test_a_batch_step_resumes_in_another_process(self):
        src = """async function main() {
  const v = await Promise.all([get(1), get(2)]);
  try { await get(3); } catch (e) { return v.concat([e.name, e.message]); }
}
main();"""
        step = self.sc.start(src, capabilities=["get"], host_calls="batch")
        self.assertEqual([(c.call_id, c.capability, c.args) for c in step.calls],
                         [(1, "get", [1.0]), (2, "get", [2.0])])
        stored = json.dumps(step.state())
        hot = self.sc.resume(step, answers={2: "b", 1: "a"})
        self.assertEqual([(c.call_id, c.args) for c in hot.calls], [(3, [3.0])])
        hot = self.sc.resume(hot, answers={3: ValueError("no third")})
        self.assertEqual(hot.value, ["a", "b", "ValueError", "no third"])
        with ms.Sidecar() as other:
            cold = ms.Step.from_state(json.loads(stored))
            self.assertEqual([c.call_id for c in cold.calls], [1, 2])
            cold = other.resume(cold, answers={2: "b", 1: "a"})
            self.assertEqual([(c.call_id, c.args) for c in cold.calls], [(3, [3.0])])
            self.assertEqual(other.resume(cold, answers={3: ValueError("no third")}).value, hot.value)

    def test_sealed_snapshots_show_no_data_and_resume_only_with_their_key(self):
        seal = bytes(range(32))
        secret = "customer-record-4711"
        with ms.Sidecar(seal_key=seal) as sealing:
            step = sealing.start("const a = get(); a + '!'", capabilities=["get"], inputs={"who": secret})
            self.assertTrue(step.sealed)
            self.assertNotIn(secret.encode(), step.snapshot)
            stored = json.dumps(step.state())
            self.assertNotIn(base64.b64encode(seal).decode(), stored)  # the key stays with the host
            self.assertEqual(sealing.resume(step, "hot").value, "hot!")
        with ms.Sidecar(seal_key=seal) as other:
            self.assertEqual(other.resume(ms.Step.from_state(json.loads(stored)), "cold").value, "cold!")
        with ms.Sidecar(seal_key=bytes(32)) as wrong:
            with self.assertRaises(ms.MustardError) as cm:
                wrong.resume(ms.Step.from_state(json.loads(stored)), "x")
            self.assertNotIsInstance(cm.exception, ms.GuestError)
        with self.assertRaises(ValueError):
            self.sc.resume(ms.Step.from_state(json.loads(stored)), "x")

    def test_a_process_that_dies_is_a_process_error_and_stays_one(self):
        step = self.sc.start("get()", capabilities=["get"])
        os.kill(self.sc.pid, signal.SIGKILL)
        for _ in range(2):
            with self.assertRaises(ms.ProcessError):
                self.sc.resume(step, 1)
        with ms.Sidecar() as other:  # the step lives on in its bytes
            self.assertEqual(other.resume(step, 1).value, 1.0)

    def test_cancel_stops_a_running_guest_and_the_process_serves_on(self):
        step = self.sc.start("const a = get(); for (;;) {}", capabilities=["get"],
                             limits={"instruction_budget": 10**15})
        failed = []

        def spin():
            try:
                self.sc.resume(step, 1)
            except ms.GuestError as e:
                failed.append(e)
        t = threading.Thread(target=spin)
        t.start()
        # Wait (a hang bound only) until the resume is written: a cancel
        # written after it is read after it, so it finds it running.
        deadline = time.monotonic() + 30
        while not self.sc._running and time.monotonic() < deadline:
            time.sleep(0.001)
        self.assertEqual(self.sc.cancel(), 1)
        t.join(30)
        self.assertEqual([(e.kind, e.code) for e in failed], [("Limit", "limit_cancelled")])
        self.assertEqual(self.sc.cancel(), 0)  # nothing in flight
        self.assertEqual(self.sc.run("1 + 2", {}).value, 3.0)
        # The snapshot the cancelled resume started from stays resumable.
        state = step.state()
        state["policy"]["limits"] = {"instruction_budget": 1000}
        self.assertEqual(step.policy["limits"], {"instruction_budget": 10**15})  # the state is a copy
        with self.assertRaises(ms.GuestError) as cm:
            self.sc.resume(ms.Step.from_state(state), 1)
        self.assertEqual(cm.exception.code, "limit_instruction_budget")

    def test_a_pool_cancel_stops_what_runs_in_every_process(self):
        pool = ms.SidecarPool(2)
        self.addCleanup(pool.close)
        failed = []
        went = []

        def spin():
            try:
                pool.run("const a = t.go(); for (;;) {}", {"t.go": lambda: went.append(1)},
                         limits={"instruction_budget": 10**15})
            except ms.GuestError as e:
                failed.append(e.code)
        threads = [threading.Thread(target=spin) for _ in range(2)]
        for t in threads:
            t.start()
        # Wait (a hang bound only) until both spin: a run's start is over
        # once its tool is called, so what each process then has in
        # flight is the resume after it.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            slots = list(pool._slots)
            if len(went) == 2 and all(sc is not None and sc._running for sc in slots):
                break
            time.sleep(0.001)
        self.assertEqual(pool.cancel(), 2)
        for t in threads:
            t.join(30)
        self.assertEqual(failed, ["limit_cancelled"] * 2)
        self.assertEqual(pool.cancel(), 0)
        self.assertEqual(pool.run("1 + 2", {}).value, 3.0)

    def test_a_missing_binary_is_a_process_error(self):
        with self.assertRaises(ms.ProcessError):
            ms.Sidecar(["/nonexistent/mustard-sidecar"])


if __name__ == "__main__":
    unittest.main()


class ReadmeTest(unittest.TestCase):
    def test_the_readmes_first_example_prints_what_its_comments_say(self):
        readme = os.path.join(os.path.dirname(__file__), "..", "README.md")
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        code = text.split("```python\n", 1)[1].split("```", 1)[0]
        want = [line.split("#", 1)[1].strip() for line in code.splitlines() if line.lstrip().startswith("print(")]
        printed = []
        exec(compile(code, "README.md", "exec"), {"print": lambda v: printed.append(repr(v))})
        self.assertEqual(printed, want)


class PoolTest(unittest.TestCase):
    def test_runs_side_by_side_and_resumes_at_home_or_elsewhere(self):
        pool = ms.SidecarPool(2)
        self.addCleanup(pool.close)
        # Two runs at once, each holding a process: their tools meet at a
        # barrier, which one process serving both could not pass.
        barrier = threading.Barrier(2, timeout=30)
        out = [None, None]

        def work(i):
            out[i] = pool.run("const a = t.meet(n); a * 2", {"t.meet": lambda n: (barrier.wait(), n)[1]},
                              inputs={"n": i + 1}).value
        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(out, [2.0, 4.0])

        step = pool.start("const a = get(); const b = get(); a + b", capabilities=["get"])
        home = step.home
        step = pool.resume(step, 1)
        self.assertIs(step.home, home)  # idle: its own process
        home.kill()  # the process dies; the pool resumes the step elsewhere and replaces it
        self.assertEqual(pool.resume(step, 2).value, 3.0)
        self.assertEqual(pool.run("1 + 1", {}).value, 2.0)
        pool.close()
        with self.assertRaises(ms.ProcessError):
            pool.run("1", {})
