package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDefaultLimits(t *testing.T) {
	want := Limits{
		InstructionBudget:       1_000_000,
		HeapLimitBytes:          8_388_608,
		AllocationBudget:        250_000,
		CallDepthLimit:          256,
		MaxOutstandingHostCalls: 128,
		MaxLogBytes:             262_144,
	}
	if got := DefaultLimits(); got != want {
		t.Fatalf("DefaultLimits() = %+v, want %+v", got, want)
	}
	if got := (LimitsSpec{}).Resolve(); got != want {
		t.Fatalf("empty spec resolves to %+v, want %+v", got, want)
	}
}

func decodeLimits(t *testing.T, in string) (Limits, error) {
	t.Helper()
	var s LimitsSpec
	err := json.Unmarshal([]byte(in), &s)
	return s.Resolve(), err
}

func TestLimitsDecodeDefaultsAndZero(t *testing.T) {
	def := DefaultLimits()
	cases := []struct {
		in   string
		want Limits
	}{
		{`null`, def},
		{`{}`, def},
		{` { } `, def},
		{`{"instruction_budget":null,"heap_limit_bytes":null,"allocation_budget":null,"call_depth_limit":null,"max_outstanding_host_calls":null}`, def},
		{`{"instruction_budget":0,"heap_limit_bytes":0,"allocation_budget":0,"call_depth_limit":0,"max_outstanding_host_calls":0}`, Limits{MaxLogBytes: DefaultMaxLogBytes}},
		{`{"call_depth_limit":0}`, func() Limits { l := def; l.CallDepthLimit = 0; return l }()},
		{`{"instruction_budget":5,"allocation_budget":null}`, func() Limits { l := def; l.InstructionBudget = 5; return l }()},
		{`{"heap_limit_bytes":18446744073709551615}`, func() Limits { l := def; l.HeapLimitBytes = 1<<64 - 1; return l }()},
		{`{"wall_time_ms":null}`, def},
		{`{"wall_time_ms":0}`, def},
		{`{"wall_time_ms":1500}`, func() Limits { l := def; l.WallTimeMS = 1500; return l }()},
		{`{"max_log_bytes":null}`, def},
		{`{"max_log_bytes":0}`, func() Limits { l := def; l.MaxLogBytes = 0; return l }()},
		{`{"max_log_bytes":100}`, func() Limits { l := def; l.MaxLogBytes = 100; return l }()},
	}
	for _, c := range cases {
		got, err := decodeLimits(t, c.in)
		if err != nil {
			t.Errorf("%s: unexpected error %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestLimitsDecodeZeroIsNotNil(t *testing.T) {
	var s LimitsSpec
	if err := json.Unmarshal([]byte(`{"instruction_budget":0}`), &s); err != nil {
		t.Fatal(err)
	}
	if s.InstructionBudget == nil || *s.InstructionBudget != 0 {
		t.Fatalf("explicit zero lost: %v", s.InstructionBudget)
	}
	if s.HeapLimitBytes != nil {
		t.Fatalf("absent field set: %v", *s.HeapLimitBytes)
	}
}

func TestLimitsDecodeNullResetsSpec(t *testing.T) {
	v := uint64(3)
	s := LimitsSpec{CallDepthLimit: &v}
	if err := s.UnmarshalJSON([]byte("null")); err != nil {
		t.Fatal(err)
	}
	if s != (LimitsSpec{}) {
		t.Fatalf("null did not reset spec: %+v", s)
	}
}

func TestLimitsDecodeStrict(t *testing.T) {
	const notUint = "limits.instruction_budget must be an unsigned integer"
	cases := []struct {
		in      string
		wantErr string
	}{
		{`{"instruction_budget":-1}`, notUint},
		{`{"instruction_budget":-0}`, notUint},
		{`{"instruction_budget":1.5}`, notUint},
		{`{"instruction_budget":1.0}`, notUint},
		{`{"instruction_budget":1e3}`, notUint},
		{`{"instruction_budget":1E3}`, notUint},
		{`{"instruction_budget":"5"}`, notUint},
		{`{"instruction_budget":true}`, notUint},
		{`{"instruction_budget":[]}`, notUint},
		{`{"instruction_budget":{}}`, notUint},
		{`{"instruction_budget":18446744073709551616}`, "limits.instruction_budget must be an unsigned integer no greater than 18446744073709551615"},
		{`{"instruction_budget":99999999999999999999999}`, "limits.instruction_budget must be an unsigned integer no greater than 18446744073709551615"},
		{`{"heap_limit_bytes":-5}`, "limits.heap_limit_bytes must be an unsigned integer"},
		{`{"allocation_budget":0.5}`, "limits.allocation_budget must be an unsigned integer"},
		{`{"call_depth_limit":"256"}`, "limits.call_depth_limit must be an unsigned integer"},
		{`{"max_outstanding_host_calls":false}`, "limits.max_outstanding_host_calls must be an unsigned integer"},
		{`{"call_depth_limit":1,"call_depth_limit":2}`, "limits.call_depth_limit appears more than once"},
		{`{"wall_time_ms":-1}`, "limits.wall_time_ms must be an unsigned integer"},
		// Closed: a misspelt or unknown limit never runs on a default.
		{`{"instructions":1000}`, "unknown field `instructions` in limits"},
		{`{"max_outstanding_host_calls":1,"future_limit":"whatever"}`, "unknown field `future_limit` in limits"},
		{`{"nested":{"a":[1,2]},"x":1}`, "unknown field `nested` in limits"},
		// Keys are matched exactly, unlike encoding/json's struct matching.
		{`{"Instruction_Budget":7}`, "unknown field `Instruction_Budget` in limits"},
		{`{"wall_time":5}`, "unknown field `wall_time` in limits"},
		{`[]`, "limits must be a JSON object"},
		{`5`, "limits must be a JSON object"},
		{`"x"`, "limits must be a JSON object"},
		{`true`, "limits must be a JSON object"},
	}
	for _, c := range cases {
		_, err := decodeLimits(t, c.in)
		if err == nil {
			t.Errorf("%s: expected error", c.in)
			continue
		}
		if err.Error() != c.wantErr {
			t.Errorf("%s: error %q, want %q", c.in, err, c.wantErr)
		}
	}
}

func TestLimitsDecodeMalformedDirect(t *testing.T) {
	// Called directly, the input has not been syntax-checked by an outer
	// decoder.
	for _, in := range []string{``, `{`, `{"instruction_budget":}`, `{"instruction_budget":1`, `{} {}`, `{"a":1,}`, `{01:1}`} {
		var s LimitsSpec
		err := s.UnmarshalJSON([]byte(in))
		if err == nil {
			t.Errorf("%q: expected error", in)
			continue
		}
		if !strings.Contains(err.Error(), "limits") {
			t.Errorf("%q: error %q does not name limits", in, err)
		}
	}
}

func TestLimitsErrorsHaveNoGoTypeNames(t *testing.T) {
	inputs := []string{`[]`, `5`, `{"instruction_budget":"5"}`, `{"instruction_budget":1e99}`, `{`, `{"a":}`}
	for _, in := range inputs {
		var s LimitsSpec
		err := s.UnmarshalJSON([]byte(in))
		if err == nil {
			t.Fatalf("%q: expected error", in)
		}
		for _, bad := range []string{"uint64", "LimitsSpec", "policy.", "map[", "json.RawMessage", "Go "} {
			if strings.Contains(err.Error(), bad) {
				t.Errorf("%q: error %q mentions %q", in, err, bad)
			}
		}
	}
}

func TestLimitsSpecNestedInRequest(t *testing.T) {
	var req struct {
		Limits LimitsSpec `json:"limits"`
	}
	if err := json.Unmarshal([]byte(`{"limits":{"call_depth_limit":0}}`), &req); err != nil {
		t.Fatal(err)
	}
	if got := req.Limits.Resolve().CallDepthLimit; got != 0 {
		t.Fatalf("call_depth_limit = %d, want 0", got)
	}
	err := json.Unmarshal([]byte(`{"limits":{"call_depth_limit":1.5}}`), &req)
	if err == nil || !strings.Contains(err.Error(), "limits.call_depth_limit must be an unsigned integer") {
		t.Fatalf("nested error = %v", err)
	}
}

func TestLimitsSpecRoundTrip(t *testing.T) {
	zero, big := uint64(0), uint64(1<<64-1)
	in := LimitsSpec{InstructionBudget: &zero, CallDepthLimit: &big}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"instruction_budget":0,"call_depth_limit":18446744073709551615}`; string(b) != want {
		t.Fatalf("marshal = %s, want %s", b, want)
	}
	var out LimitsSpec
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Resolve() != in.Resolve() {
		t.Fatalf("round trip: %+v != %+v", out.Resolve(), in.Resolve())
	}
}
