package engine

import (
	"errors"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/policy"
	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// testStore serves a replay's program from its bytes.
type testStore struct{ room int }

func (s *testStore) Program(_ string, b []byte) (*Program, error) { return LoadProgram(b) }
func (s *testStore) MakeRoom(policy.Limits)                       { s.room++ }

// Every refusal of a resume, hot (the parked execution, its bytes held)
// and cold (its bytes sent), is the same refusal, and a refused hot
// resume leaves the execution parked and able to go on.
func TestResumeRefusesAlikeHotAndCold(t *testing.T) {
	p, err := Compile(`const a = fetch_data(1); const b = other(2); a + b`)
	if err != nil {
		t.Fatal(err)
	}
	seal, err := snapshot.NewSealer([]byte("a seal key of thirty-two bytes!!"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := snapshot.NewSealer([]byte("another key of thirty-two bytes!"))
	if err != nil {
		t.Fatal(err)
	}
	grant := policy.Policy{Capabilities: []string{"fetch_data", "other"}, Limits: policy.DefaultLimits()}
	h := snapshot.Header{Program: p.Bytes, Capabilities: grant.Capabilities, Seed: 1, ClockMillis: 1}
	one := Payload{Outcome: snapshot.Outcome{Value: value.Number(40)}}

	x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: grant.Limits, Seal: seal})
	if !step.Suspended() {
		t.Fatal(describeStep(step))
	}
	defer x.Abandon()
	raw := step.Snapshot

	withPolicy := func(f func(*policy.Policy)) policy.Policy {
		q := grant
		q.Capabilities = append([]string(nil), grant.Capabilities...)
		f(&q)
		return q
	}
	for _, tc := range []struct {
		name   string
		seal   *snapshot.Sealer
		pol    policy.Policy
		batch  []Answer
		reason RefusalReason
		text   string
	}{
		{"no seal key", nil, grant, nil, SealKeyRequired, snapshot.ErrSealedNeedsKey.Error()},
		{"another seal key", other, grant, nil, WrongSealKey, snapshot.ErrSealKey.Error()},
		{"batch answers in one mode", seal, grant, []Answer{{CallID: 1, Payload: one}}, ModeMismatch, "resume payload does not match host_calls one"},
		{"one payload in batch mode", seal, withPolicy(func(q *policy.Policy) { q.HostCalls = policy.HostCallsBatch }), nil, ModeMismatch, "resume payload does not match host_calls batch"},
		{"another console", seal, withPolicy(func(q *policy.Policy) { q.Console = policy.ConsoleCollect }), nil, ConsoleMismatch, "snapshot policy rejected console `collect`; the execution started with console `off`"},
		{"capability not granted", seal, withPolicy(func(q *policy.Policy) { q.Capabilities = []string{"other"} }), nil, Unauthorized, "snapshot policy rejected unauthorized capability `fetch_data`"},
		// The order docs/protocol.md gives: the mode, the console, then the capabilities.
		{"another console, capability not granted", seal, withPolicy(func(q *policy.Policy) { q.Console, q.Capabilities = policy.ConsoleCollect, []string{"other"} }), nil, ConsoleMismatch, "snapshot policy rejected console `collect`; the execution started with console `off`"},
		{"batch answers in one mode, another console", seal, withPolicy(func(q *policy.Policy) { q.Console = policy.ConsoleCollect }), []Answer{{CallID: 1, Payload: one}}, ModeMismatch, "resume payload does not match host_calls one"},
	} {
		for _, hot := range []bool{true, false} {
			r := Resume{Raw: raw, Seal: tc.seal, Policy: tc.pol, Answers: tc.batch, One: one, HasOne: tc.batch == nil}
			if hot {
				r.Parked, r.Held, r.HeldSeal = x, true, seal
			}
			err := r.Admit()
			var rf *Refusal
			if !errors.As(err, &rf) || rf.Reason != tc.reason || rf.Msg != tc.text {
				t.Fatalf("%s (hot %v): %v", tc.name, hot, err)
			}
		}
	}

	// Bytes that are not a snapshot fail as Serialization, before any
	// policy check.
	r := Resume{Raw: []byte("not a snapshot"), Policy: grant, HasOne: true}
	var ee *Error
	if err := r.Admit(); !errors.As(err, &ee) || ee.Kind != KindSerialization {
		t.Fatalf("malformed bytes: %v", err)
	}

	// A replay run before it is admitted fails; it does not panic.
	if _, step := (&Resume{Raw: raw, Seal: seal, Policy: grant, HasOne: true}).Run(testRuntime, &testStore{}, nil); step.Err == nil {
		t.Fatal("an unadmitted replay ran")
	}

	// Admitted, the parked execution and the replay go on alike.
	var values []string
	for _, hot := range []bool{true, false} {
		r := Resume{Raw: raw, Seal: seal, Policy: grant, One: one, HasOne: true}
		if hot {
			r.Parked, r.Held, r.HeldSeal = x, true, seal
		}
		if err := r.Admit(); err != nil {
			t.Fatal(err)
		}
		st := &testStore{}
		nx, step := r.Run(testRuntime, st, nil)
		if !step.Suspended() || step.Capability != "other" || st.room != 1 {
			t.Fatalf("hot %v: %s, room made %d times", hot, describeStep(step), st.room)
		}
		values = append(values, step.SnapshotID)
		if !hot {
			nx.Abandon()
		} else {
			x = nx
		}
	}
	if values[0] != values[1] {
		t.Fatalf("hot and cold resumes wrote different snapshots: %v", values)
	}
}
