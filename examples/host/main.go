// Command host is a small embedding host: it spawns mustard-sidecar, runs a
// guest program, answers each capability call from a fixture file and
// prints every step. With -cold it kills the sidecar at every suspension
// and resumes from the raw snapshot bytes in a brand-new process.
//
//	go run ./examples/host examples/trip/trip.js examples/trip/fixture.json
package main

import (
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/mustard-sidecar/mustard-sidecar/internal/cli"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
)

type fixture struct {
	Inputs       map[string]json.RawMessage `json:"inputs"`
	Capabilities []string                   `json:"capabilities"`
	Answers      []json.RawMessage          `json:"answers"`
}

func main() {
	hosttest.RunAsSidecar(cli.Main)
	cold := flag.Bool("cold", false, "restart the sidecar at every suspension and resume from raw snapshot bytes")
	jsonl := flag.Bool("jsonl", false, "use the --jsonl transport")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: host [-cold] [-jsonl] program.js fixture.json")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *cold, *jsonl); err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(1)
	}
}

func run(programPath, fixturePath string, cold, jsonl bool) error {
	src, err := os.ReadFile(programPath)
	if err != nil {
		return err
	}
	var fx fixture
	raw, err := os.ReadFile(fixturePath)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		return fmt.Errorf("%s: %v", fixturePath, err)
	}
	var args []string
	if jsonl {
		args = append(args, "--jsonl")
	}
	sc, err := hosttest.Start(args...)
	if err != nil {
		return err
	}
	defer func() { sc.Wait() }()

	// The host's own snapshot key: it signs every snapshot it accepts.
	key := make([]byte, 32)
	_, _ = rand.Read(key)

	id := uint64(1)
	resp, err := sc.Call(map[string]any{"protocol_version": 2, "id": id, "method": "compile", "source": string(src)}, nil, "")
	if err != nil {
		return err
	}
	if !resp.OK() {
		return fmt.Errorf("compile failed: %s", resp.Error())
	}
	program := resp.Payload
	fmt.Printf("compile   program_id=%.16s… (%d bytes)\n", resp.Result()["program_id"], len(program))

	id++
	resp, err = sc.Call(map[string]any{
		"protocol_version": 2, "id": id, "method": "start",
		"program_id": resp.Result()["program_id"],
		"options":    map[string]any{"inputs": fx.Inputs, "capabilities": fx.Capabilities, "limits": map[string]any{}},
	}, nil, "")
	if err != nil {
		return err
	}
	for n := 0; ; n++ {
		if !resp.OK() {
			return fmt.Errorf("step failed: %s", resp.Error())
		}
		step := resp.Step()
		if step["type"] == "completed" {
			v, _ := json.Marshal(step["value"])
			fmt.Printf("completed %s\n", v)
			return nil
		}
		argsJSON, _ := json.Marshal(step["args"])
		snapID, _ := resp.Result()["snapshot_id"].(string)
		policyID, _ := resp.Result()["policy_id"].(string)
		fmt.Printf("suspended %s%s snapshot=%.16s… (%d bytes)\n", step["capability"], argsJSON, snapID, len(resp.Payload))
		if n >= len(fx.Answers) {
			return fmt.Errorf("the fixture has no answer for call %d", n+1)
		}
		var answer map[string]any
		if err := json.Unmarshal(fx.Answers[n], &answer); err != nil {
			return err
		}
		a, _ := json.Marshal(answer)
		fmt.Printf("  answer  %s\n", a)
		id++
		req := map[string]any{"protocol_version": 2, "id": id, "method": "resume", "payload": answer}
		var snapBytes []byte
		if cold {
			// Simulate a crash: a new process knows nothing, so the host sends
			// the snapshot bytes and re-asserts the whole policy.
			snapBytes = resp.Payload
			sc.Kill()
			if sc, err = hosttest.Start(args...); err != nil {
				return err
			}
			req["policy"] = hosttest.Policy(key, snapID, fx.Capabilities, map[string]any{})
			fmt.Println("  (restarted the sidecar; resuming from raw snapshot bytes)")
		} else {
			req["snapshot_id"] = snapID
			req["policy_id"] = policyID
			req["auth"] = hosttest.Auth(key, snapID)
		}
		if resp, err = sc.Call(req, snapBytes, "snapshot_base64"); err != nil {
			return err
		}
	}
}
