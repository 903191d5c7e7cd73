package policy

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

func mustNew(t *testing.T, caps []string, l Limits) Policy {
	t.Helper()
	p, err := New(caps, l)
	if err != nil {
		t.Fatalf("New(%q): %v", caps, err)
	}
	return p
}

// Golden ids pin the encoding: if one of these changes, the encoding has
// drifted and IDVersion must be bumped deliberately.
func TestIDGolden(t *testing.T) {
	cases := []struct {
		caps []string
		id   string
	}{
		{nil, "407e8b7f9600b90aac36ad2d8d5aaef9905741165457be78097fabddd23100fd"},
		{[]string{}, "407e8b7f9600b90aac36ad2d8d5aaef9905741165457be78097fabddd23100fd"},
		{[]string{"fetch_data"}, "fbd6ecf21199b80c737e4119a278cdba382183933071b30d99ce9d5a05ed22c0"},
	}
	for _, c := range cases {
		if got := mustNew(t, c.caps, DefaultLimits()).ID(); got != c.id {
			t.Errorf("ID(%q) = %s, want %s", c.caps, got, c.id)
		}
	}
}

// A wall-time limit of 0 (none, the default) leaves the encoding, and so
// every policy_id made before the limit existed, as it was; any other value
// adds a sixth limit.
func TestWallTimeInIDOnlyWhenSet(t *testing.T) {
	l := DefaultLimits()
	l.WallTimeMS = 0
	if got := mustNew(t, []string{"fetch_data"}, l).ID(); got != "fbd6ecf21199b80c737e4119a278cdba382183933071b30d99ce9d5a05ed22c0" {
		t.Fatalf("wall_time_ms 0 changed the id: %s", got)
	}
	l.WallTimeMS = 250
	enc := mustNew(t, nil, l).AppendCanonical(nil)
	tail := []byte{0x86, 0x1a, 0x00, 0x0f, 0x42, 0x40, 0x1a, 0x00, 0x80, 0x00, 0x00, 0x1a, 0x00, 0x03, 0xd0, 0x90, 0x19, 0x01, 0x00, 0x18, 0x80, 0x18, 0xfa}
	if !bytes.HasSuffix(enc, tail) {
		t.Fatalf("encoding = %x, want it to end %x", enc, tail)
	}
}

// The batch host-call mode adds a fourth item to the encoding; the default
// mode leaves every id as it was.
func TestHostCallsInIDOnlyWhenBatch(t *testing.T) {
	p := mustNew(t, []string{"fetch_data"}, DefaultLimits())
	p.HostCalls = HostCallsOne
	if got := p.ID(); got != "fbd6ecf21199b80c737e4119a278cdba382183933071b30d99ce9d5a05ed22c0" {
		t.Fatalf("host_calls one changed the id: %s", got)
	}
	p.HostCalls = HostCallsBatch
	enc := p.AppendCanonical(nil)
	if enc[0] != 0x84 || !bytes.HasSuffix(enc, append([]byte{0x65}, "batch"...)) {
		t.Fatalf("encoding = %x", enc)
	}
	for _, s := range []string{"one", "batch"} {
		m, err := ParseHostCalls(s)
		if err != nil || m.String() != s {
			t.Fatalf("%s: %v %v", s, m, err)
		}
	}
	if _, err := ParseHostCalls("many"); err == nil || err.Error() != "unknown host_calls `many`" {
		t.Fatalf("ParseHostCalls(many): %v", err)
	}
}

func TestCanonicalEncodingGolden(t *testing.T) {
	got := mustNew(t, nil, DefaultLimits()).AppendCanonical(nil)
	want := []byte{0x83, 0x70}
	want = append(want, "mustard-policy/1"...)
	want = append(want, 0x80, 0x85,
		0x1a, 0x00, 0x0f, 0x42, 0x40,
		0x1a, 0x00, 0x80, 0x00, 0x00,
		0x1a, 0x00, 0x03, 0xd0, 0x90,
		0x19, 0x01, 0x00,
		0x18, 0x80)
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding = %x, want %x", got, want)
	}
}

// The hand-rolled encoder must agree with an independent deterministic CBOR
// encoder across head sizes.
func TestCanonicalEncodingMatchesCBOR(t *testing.T) {
	em, err := cbor.CoreDetEncOptions().EncMode()
	if err != nil {
		t.Fatal(err)
	}
	values := []uint64{0, 1, 23, 24, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, 1<<64 - 1}
	names := []string{"a", strings.Repeat("b", 23), strings.Repeat("c", 24), strings.Repeat("d", 128)}
	for i, v := range values {
		l := Limits{v, values[(i+1)%len(values)], values[(i+2)%len(values)], values[(i+3)%len(values)], values[(i+4)%len(values)], values[(i+5)%len(values)], DefaultMaxLogBytes}
		if i%3 == 1 {
			l.MaxLogBytes = values[(i+6)%len(values)]
		}
		caps := names[:i%(len(names)+1)]
		p := mustNew(t, caps, l)
		p.HostCalls = HostCalls(i % 2)
		p.Console = Console(i / 2 % 2)
		limits := []uint64{l.InstructionBudget, l.HeapLimitBytes, l.AllocationBudget, l.CallDepthLimit, l.MaxOutstandingHostCalls}
		if l.WallTimeMS != 0 || l.MaxLogBytes != DefaultMaxLogBytes {
			limits = append(limits, l.WallTimeMS)
		}
		if l.MaxLogBytes != DefaultMaxLogBytes {
			limits = append(limits, l.MaxLogBytes)
		}
		items := []any{IDVersion, p.Capabilities, limits}
		if p.HostCalls == HostCallsBatch {
			items = append(items, "batch")
		}
		if p.Console == ConsoleCollect {
			items = append(items, "console:collect")
		}
		want, err := em.Marshal(items)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.AppendCanonical(nil); !bytes.Equal(got, want) {
			t.Errorf("limits %v caps %d:\n got %x\nwant %x", l, len(caps), got, want)
		}
	}
	// Many capabilities need a multi-byte array head.
	many := make([]string, 300)
	for i := range many {
		many[i] = "cap" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i)
	}
	p := mustNew(t, many, DefaultLimits())
	d := DefaultLimits()
	want, _ := em.Marshal([]any{IDVersion, p.Capabilities, []uint64{d.InstructionBudget, d.HeapLimitBytes, d.AllocationBudget, d.CallDepthLimit, d.MaxOutstandingHostCalls}})
	if got := p.AppendCanonical(nil); !bytes.Equal(got, want) {
		t.Errorf("300 capabilities: encodings differ")
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestIDEqualForPermutationsAndDuplicates(t *testing.T) {
	l := DefaultLimits()
	base := mustNew(t, []string{"alpha", "beta", "gamma"}, l).ID()
	for _, caps := range [][]string{
		{"gamma", "beta", "alpha"},
		{"beta", "alpha", "gamma"},
		{"alpha", "alpha", "beta", "gamma", "gamma", "beta"},
		{"gamma", "gamma", "gamma", "alpha", "beta"},
	} {
		if got := mustNew(t, caps, l).ID(); got != base {
			t.Errorf("ID(%q) = %s, want %s", caps, got, base)
		}
	}
	// Limits given via defaults or spelled out are the same policy.
	spelled := Limits{1_000_000, 8 << 20, 250_000, 256, 128, 0, 256 << 10}
	if got := mustNew(t, []string{"beta", "alpha", "gamma"}, spelled).ID(); got != base {
		t.Errorf("explicit default limits changed id")
	}
}

func TestIDDiffersForAnyChange(t *testing.T) {
	caps := []string{"alpha", "beta"}
	base := mustNew(t, caps, DefaultLimits())
	ids := map[string]string{base.ID(): "base"}
	check := func(name string, p Policy) {
		t.Helper()
		id := p.ID()
		if prev, dup := ids[id]; dup {
			t.Errorf("%s has the same id as %s", name, prev)
		}
		ids[id] = name
	}
	fields := []struct {
		name string
		ptr  func(*Limits) *uint64
	}{
		{"instruction_budget", func(l *Limits) *uint64 { return &l.InstructionBudget }},
		{"heap_limit_bytes", func(l *Limits) *uint64 { return &l.HeapLimitBytes }},
		{"allocation_budget", func(l *Limits) *uint64 { return &l.AllocationBudget }},
		{"call_depth_limit", func(l *Limits) *uint64 { return &l.CallDepthLimit }},
		{"max_outstanding_host_calls", func(l *Limits) *uint64 { return &l.MaxOutstandingHostCalls }},
		{"wall_time_ms", func(l *Limits) *uint64 { return &l.WallTimeMS }},
	}
	for _, f := range fields {
		for _, delta := range []string{"+1", "zero"} {
			l := DefaultLimits()
			if delta == "+1" {
				*f.ptr(&l)++
			} else {
				*f.ptr(&l) = 0
			}
			if *f.ptr(&l) == *f.ptr(&base.Limits) {
				continue // wall_time_ms defaults to 0
			}
			check(f.name+delta, mustNew(t, caps, l))
		}
	}
	// Swapping two limit values must not collide either.
	l := DefaultLimits()
	l.InstructionBudget, l.AllocationBudget = l.AllocationBudget, l.InstructionBudget
	check("swapped budgets", mustNew(t, caps, l))

	check("capability added", mustNew(t, []string{"alpha", "beta", "delta"}, DefaultLimits()))
	check("capability removed", mustNew(t, []string{"alpha"}, DefaultLimits()))
	check("capability renamed", mustNew(t, []string{"alpha", "betA"}, DefaultLimits()))
	check("no capabilities", mustNew(t, nil, DefaultLimits()))
	// Length prefixes keep concatenations apart.
	check("joined names", mustNew(t, []string{"alphabeta"}, DefaultLimits()))
	check("split names", mustNew(t, []string{"alph", "abeta"}, DefaultLimits()))
}

func TestIDFormat(t *testing.T) {
	id := mustNew(t, []string{"x"}, Limits{}).ID()
	if len(id) != 64 || strings.ToLower(id) != id {
		t.Fatalf("id %q is not lowercase hex SHA-256", id)
	}
}

func TestNewSortsCopiesAndDeduplicates(t *testing.T) {
	in := []string{"zeta", "alpha", "mid", "alpha", "zeta"}
	orig := append([]string(nil), in...)
	p := mustNew(t, in, DefaultLimits())
	want := []string{"alpha", "mid", "zeta"}
	if strings.Join(p.Capabilities, ",") != strings.Join(want, ",") {
		t.Fatalf("Capabilities = %q, want %q", p.Capabilities, want)
	}
	if strings.Join(in, ",") != strings.Join(orig, ",") {
		t.Fatalf("input modified: %q", in)
	}
	if p.Limits != DefaultLimits() {
		t.Fatalf("limits not kept")
	}
	if e := mustNew(t, nil, Limits{}); e.Capabilities == nil || len(e.Capabilities) != 0 {
		t.Fatalf("nil input gives %#v, want empty non-nil", e.Capabilities)
	}
}

func TestNewCapabilityCount(t *testing.T) {
	caps := make([]string, MaxCapabilities)
	for i := range caps {
		caps[i] = "c" + itoa(i)
	}
	if _, err := New(caps, DefaultLimits()); err != nil {
		t.Fatalf("%d capabilities rejected: %v", MaxCapabilities, err)
	}
	// Duplicates do not count against the limit.
	if _, err := New(append(caps, caps[:10]...), DefaultLimits()); err != nil {
		t.Fatalf("duplicates counted: %v", err)
	}
	_, err := New(append(caps, "one_more"), DefaultLimits())
	if err == nil || err.Error() != "too many capabilities: 1025 (maximum 1024)" {
		t.Fatalf("1025 capabilities: err = %v", err)
	}
}

func TestCapabilityNameValidation(t *testing.T) {
	valid := []string{
		"a", "A", "_", "$", "fetch_data", "fetchData", "$fetch", "_private", "x1", "a$b_c9",
		"Eval", "Undefined", "nan", "infinity", "asyncTool", "async", "get", "set", "of", "from",
		"__mustar", "_mustard", "__Mustard", "mustard__", "x__mustard",
		strings.Repeat("a", 128),
		// Dotted names (namespaced capabilities).
		"github.create_issue", "fs.read-file", "a.b.c.d", "ns.1x", "my-server.tool", "x.delete", "$.$",
		"console.log", "console.info", "console.warn", "console.error", "console.debug",
	}
	for _, name := range valid {
		if _, err := New([]string{name}, DefaultLimits()); err != nil {
			t.Errorf("%q rejected: %v", name, err)
		}
	}

	invalid := []string{
		"", "x y", " x", "x ", "1abc", "9", "a-b", "a/b",
		// Dotted names: empty segments, too deep, bad bytes, reserved
		// first segments, console members that are not console methods.
		"a.", ".a", "a..b", "a.b.c.d.e", "a.b c", "a.b/c", "a.é", "class.x", "globalThis.x", "__mustard.x",
		"console", "console.table", "console.log.x", "console.dir", "a\x00", "tab\t", "ünïcode", "café",
		"\u0430", // Cyrillic a
		"a\u200b", strings.Repeat("a", 129),
		"__mustard", "__mustardFoo", "__mustard_internal",
		// ES2023 reserved words.
		"await", "break", "case", "catch", "class", "const", "continue", "debugger", "default",
		"delete", "do", "else", "enum", "export", "extends", "false", "finally", "for", "function",
		"if", "import", "in", "instanceof", "new", "null", "return", "super", "switch", "this",
		"throw", "true", "try", "typeof", "var", "void", "while", "with", "yield",
		// Strict mode.
		"implements", "interface", "let", "package", "private", "protected", "public", "static",
		// Extras.
		"eval", "arguments", "undefined", "NaN", "Infinity", "globalThis",
	}
	for _, name := range invalid {
		_, err := New([]string{"okay", name}, DefaultLimits())
		if err == nil {
			t.Errorf("%q accepted", name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "invalid capability name ") {
			t.Errorf("%q: error %q lacks the expected prefix", name, err)
		}
		if len(err.Error()) > 200 {
			t.Errorf("%q: error too long (%d bytes)", name, len(err.Error()))
		}
	}
}

func TestCapabilityNameErrorText(t *testing.T) {
	_, err := New([]string{"x y"}, DefaultLimits())
	if err == nil || !strings.HasPrefix(err.Error(), `invalid capability name "x y"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestAllows(t *testing.T) {
	p := mustNew(t, []string{"fetch_data", "b", "a", "zz"}, DefaultLimits())
	for _, c := range []string{"a", "b", "fetch_data", "zz"} {
		if !p.Allows(c) {
			t.Errorf("Allows(%q) = false", c)
		}
	}
	for _, c := range []string{"", "c", "fetch", "fetch_data2", "Fetch_data", "zzz", "__mustard"} {
		if p.Allows(c) {
			t.Errorf("Allows(%q) = true", c)
		}
	}
	if (Policy{}).Allows("a") {
		t.Error("zero policy allows a capability")
	}
}

func TestReassert(t *testing.T) {
	p := mustNew(t, []string{"fetch_data"}, DefaultLimits())
	if err := p.Reassert("fetch_data"); err != nil {
		t.Fatalf("allowed capability rejected: %v", err)
	}
	err := p.Reassert("send_email")
	if err == nil {
		t.Fatal("unauthorized capability accepted")
	}
	if got, want := err.Error(), "snapshot policy rejected unauthorized capability `send_email`"; got != want {
		t.Fatalf("error = %q, want %q", got, want)
	}
	var uc *UnauthorizedCapabilityError
	if !errors.As(err, &uc) || uc.Capability != "send_email" {
		t.Fatalf("error not an UnauthorizedCapabilityError: %#v", err)
	}
	if err := (Policy{}).Reassert("fetch_data"); err == nil ||
		err.Error() != "snapshot policy rejected unauthorized capability `fetch_data`" {
		t.Fatalf("empty policy: %v", err)
	}
}

func BenchmarkID(b *testing.B) {
	caps := make([]string, 16)
	for i := range caps {
		caps[i] = "capability_" + itoa(i)
	}
	p, _ := New(caps, DefaultLimits())
	b.ReportAllocs()
	for b.Loop() {
		_ = p.ID()
	}
}

func TestNamespaceConflicts(t *testing.T) {
	for _, caps := range [][]string{
		{"a", "a.b"},
		{"a.b", "a.b.c"},
		{"gh.x", "gh", "gh$"},
		{"a.b.c", "a.b", "a$"},
	} {
		_, err := New(caps, DefaultLimits())
		if err == nil || !strings.Contains(err.Error(), "both a function and a namespace") {
			t.Errorf("%q: err = %v, want a function/namespace conflict", caps, err)
		}
	}
	for _, caps := range [][]string{
		{"a", "ab.c", "a$.b", "a-b.c"},
		{"gh.x", "gh.y.z", "gh.xy"},
		{"console.log", "console.warn", "log"},
		{"a.b", "a.b"},
	} {
		if _, err := New(caps, DefaultLimits()); err != nil {
			t.Errorf("%q refused: %v", caps, err)
		}
	}
}

func TestConsoleModeChangesPolicyID(t *testing.T) {
	p := mustNew(t, []string{"x"}, DefaultLimits())
	off := p.ID()
	p.Console = ConsoleCollect
	if p.ID() == off {
		t.Fatal("console collect kept the policy_id of console off")
	}
	for _, s := range []string{"off", "collect"} {
		c, err := ParseConsole(s)
		if err != nil || c.String() != s {
			t.Errorf("ParseConsole(%q) = %v, %v", s, c, err)
		}
	}
	if _, err := ParseConsole("on"); err == nil || err.Error() != "unknown console `on`" {
		t.Errorf("ParseConsole(on) err = %v", err)
	}
}
