#!/usr/bin/env python3
"""A mustard-sidecar host in Python, standard library only.

Spawns the sidecar (binary frames), compiles a guest program, starts it,
answers each capability call from a fixture file and prints every step.
With --cold it restarts the sidecar at every suspension and resumes from
the raw snapshot bytes, re-asserting the policy, as a host does after a
crash.

    python3 examples/python/host.py examples/trip/trip.js examples/trip/fixture.json

The sidecar is --sidecar PATH, else $MUSTARD_SIDECAR_BIN, else
mustard-sidecar on PATH (go install ./cmd/mustard-sidecar).
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import secrets
import shutil
import struct
import subprocess
import sys

PROTOCOL_VERSION = 2
MAX_REQUEST = 1 << 20  # the sidecar ends the session on a larger request
MAX_RESPONSE = 65 << 20  # 64 MiB (largest snapshot) + room for the header


class SidecarError(Exception):
    """A request the sidecar answered with ok: false."""


class Sidecar:
    """One sidecar process over binary frames:
    u32 LE header_len | u32 LE payload_len | JSON header | payload."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def call(self, method, raw=b"", **fields):
        """Sends a request (raw bytes travel as the frame payload) and reads its response."""
        self.next_id += 1
        header = dict(protocol_version=PROTOCOL_VERSION, id=self.next_id, method=method, **fields)
        h = json.dumps(header, separators=(",", ":")).encode()
        if len(h) + len(raw) > MAX_REQUEST:
            raise ValueError(f"{method} request of {len(h) + len(raw)} bytes is over the 1 MiB limit")
        self.proc.stdin.write(struct.pack("<II", len(h), len(raw)) + h + raw)
        self.proc.stdin.flush()

        prefix = self._read(8)
        hl, pl = struct.unpack("<II", prefix)
        if hl + pl > MAX_RESPONSE:  # never allocate what a broken sidecar claims
            raise RuntimeError(f"response of {hl + pl} bytes is over the bound")
        resp = json.loads(self._read(hl))
        body = self._read(pl)
        if resp.get("id") != self.next_id:
            raise RuntimeError(f"response id {resp.get('id')} does not answer request {self.next_id}")
        if not resp["ok"]:
            print_logs(resp.get("logs"))
            raise SidecarError(resp["error"])
        return resp["result"], body

    def _read(self, n):
        data = self.proc.stdout.read(n)
        if len(data) != n:
            code = self.proc.wait()
            raise RuntimeError(f"sidecar exited (status {code}) in the middle of a response")
        return data

    def close(self):
        """Graceful: EOF on stdin, the sidecar answers what it read and exits."""
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdin.close()
        self.proc.stdout.close()


def auth(key, snapshot_id):
    """What proves the host accepted a snapshot: its id signed with the key."""
    return {
        "snapshot_key_base64": base64.b64encode(key).decode(),
        "snapshot_key_digest": hashlib.sha256(key).hexdigest(),
        "snapshot_token": hmac.new(key, snapshot_id.encode("ascii"), hashlib.sha256).hexdigest(),
    }


def print_logs(lines):
    """The lines the guest wrote with console during a step."""
    for line in lines or []:
        print(f"  {line['level']:<7} {line['text']}")


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program")
    ap.add_argument("fixture")
    ap.add_argument("--cold", action="store_true", help="restart the sidecar at every suspension")
    ap.add_argument("--sidecar", default=os.environ.get("MUSTARD_SIDECAR_BIN") or shutil.which("mustard-sidecar"))
    args = ap.parse_args()
    if not args.sidecar:
        sys.exit("host.py: no sidecar: pass --sidecar, set MUSTARD_SIDECAR_BIN or put mustard-sidecar on PATH")

    with open(args.program, encoding="utf-8") as f:
        source = f.read()
    with open(args.fixture, encoding="utf-8") as f:
        fx = json.load(f)
    key = secrets.token_bytes(32)  # the host's snapshot key

    sc = Sidecar([args.sidecar])
    try:
        # A .ts program is TypeScript; the fixture may ask for the guest's
        # console lines ("console": "collect") and a function-shaped
        # program ("entry": "call"). Capability names may be dotted.
        language = "typescript" if args.program.endswith(".ts") else "javascript"
        compile_fields = {"language": language} if language != "javascript" else {}
        result, program = sc.call("compile", source=source, **compile_fields)
        if hashlib.sha256(program).hexdigest() != result["program_id"]:
            raise RuntimeError("program bytes do not match program_id")
        print(f"compile   program_id={result['program_id'][:16]}… ({len(program)} bytes, {language})")

        options = {"inputs": fx["inputs"], "capabilities": fx["capabilities"], "limits": {}}
        policy_extra = {}
        if fx.get("console", "off") != "off":
            options["console"] = policy_extra["console"] = fx["console"]
        if fx.get("entry", "script") != "script":
            options["entry"] = fx["entry"]
        result, snapshot = sc.call("start", program_id=result["program_id"], options=options)
        for n, answer in enumerate([*fx["answers"], None]):
            step = result["step"]
            print_logs(step.get("logs"))
            if step["type"] == "completed":
                print("completed " + compact(step["value"]))
                return
            if answer is None:
                raise RuntimeError(f"the fixture has no answer for call {n + 1}")
            snapshot_id = result["snapshot_id"]
            if hashlib.sha256(snapshot).hexdigest() != snapshot_id:
                raise RuntimeError("snapshot bytes do not match snapshot_id")
            print(f"suspended {step['capability']}{compact(step['args'])} snapshot={snapshot_id[:16]}… ({len(snapshot)} bytes)")
            print("  answer  " + compact(answer))
            if args.cold:
                # A new process knows nothing: send the bytes and the whole policy.
                sc.kill()
                sc = Sidecar([args.sidecar])
                print("  (restarted the sidecar; resuming from raw snapshot bytes)")
                policy = {"capabilities": fx["capabilities"], "limits": {}, "snapshot_id": snapshot_id,
                          **policy_extra, **auth(key, snapshot_id)}
                result, snapshot = sc.call("resume", snapshot, policy=policy, payload=answer)
            else:
                result, snapshot = sc.call("resume", snapshot_id=snapshot_id, policy_id=result["policy_id"],
                                           auth=auth(key, snapshot_id), payload=answer)
    except SidecarError as e:
        sys.exit(f"host.py: {e}")
    finally:
        sc.close()


if __name__ == "__main__":
    main()
