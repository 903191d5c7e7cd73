// Package policy holds what a guest program is allowed to do: the set of
// capabilities (host tools) it may call and the resource limits it runs
// under, plus the canonical policy_id that identifies a policy.
package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// ReservedPrefix starts names kept for the implementation's own globals, so
// no capability can shadow or impersonate them.
const ReservedPrefix = "__mustard"

// MaxCapabilities is the largest number of distinct capabilities a policy
// may hold.
const MaxCapabilities = 1024

// MaxCapabilityNameLen is the longest capability name, in bytes.
const MaxCapabilityNameLen = 128

// IDVersion tags the policy_id encoding; any change to the encoding must
// change this tag.
const IDVersion = "mustard-policy/1"

// Policy is a validated policy. Capabilities is sorted and free of
// duplicates; build policies with New so that holds (Allows and ID rely
// on it).
type Policy struct {
	Capabilities []string
	Limits       Limits
	HostCalls    HostCalls
	Console      Console
}

// Console is whether the guest's console methods that no capability
// serves collect their lines into each step's logs.
type Console uint8

const (
	// ConsoleOff: no collected console; a console object exists only
	// when console.* capabilities are granted.
	ConsoleOff Console = iota
	// ConsoleCollect: console.log, info, warn, error and debug exist;
	// those not granted as capabilities format their arguments as Node
	// does and append a line to the step's logs.
	ConsoleCollect
)

// String is the mode's wire name.
func (c Console) String() string {
	if c == ConsoleCollect {
		return wire.ConsoleCollect
	}
	return wire.ConsoleOff
}

// ParseConsole reads a console mode's wire name.
func ParseConsole(s string) (Console, error) {
	switch s {
	case wire.ConsoleOff:
		return ConsoleOff, nil
	case wire.ConsoleCollect:
		return ConsoleCollect, nil
	}
	return 0, fmt.Errorf("unknown console `%s`", s)
}

// ConsoleMethods are the console methods a guest may have, and so the
// only capabilities under the name console.
var ConsoleMethods = []string{"debug", "error", "info", "log", "warn"}

// HostCalls is how a suspended step presents the outstanding host calls
// and how a resume answers them.
type HostCalls uint8

const (
	// HostCallsOne presents one call per step (the synchronous call the
	// guest waits in, or else the oldest), answered by the resume's
	// payload.
	HostCallsOne HostCalls = iota
	// HostCallsBatch lists every outstanding call with its call_id; a
	// resume answers any of them.
	HostCallsBatch
)

// String is the mode's wire name.
func (m HostCalls) String() string {
	if m == HostCallsBatch {
		return wire.HostCallsBatch
	}
	return wire.HostCallsOne
}

// ParseHostCalls reads a mode's wire name.
func ParseHostCalls(s string) (HostCalls, error) {
	switch s {
	case wire.HostCallsOne:
		return HostCallsOne, nil
	case wire.HostCallsBatch:
		return HostCallsBatch, nil
	}
	return 0, fmt.Errorf("unknown host_calls `%s`", s)
}

// New validates the capability names and returns a policy whose capability
// list is a sorted, de-duplicated copy of capabilities. The input slice is
// not modified.
func New(capabilities []string, limits Limits) (Policy, error) {
	for _, name := range capabilities {
		if err := ValidateCapabilityName(name); err != nil {
			return Policy{}, err
		}
	}
	caps := slices.Clone(capabilities)
	if caps == nil {
		caps = []string{}
	}
	slices.Sort(caps)
	caps = slices.Compact(caps)
	if len(caps) > MaxCapabilities {
		return Policy{}, fmt.Errorf("too many capabilities: %d (maximum %d)", len(caps), MaxCapabilities)
	}
	if err := CheckNamespaces(caps); err != nil {
		return Policy{}, err
	}
	return Policy{Capabilities: caps, Limits: limits}, nil
}

// MaxCapabilitySegments is the most dot-separated segments a capability
// name may have (a namespace path of three, then the function).
const MaxCapabilitySegments = 4

// ValidateCapabilityName reports whether name can be used as a capability.
// A plain name must be usable as a JavaScript identifier binding (ASCII
// only, so there are no Unicode confusables or normalization questions),
// must not be a reserved word or a well-known global the guest relies on,
// and must not use the implementation's reserved prefix. A dotted name
// (`github.create_issue`) is a path of 2 to MaxCapabilitySegments segments
// of ASCII letters, digits, _, $ and - (MCP tool names often hold a -);
// its first segment, a global the guest sees, follows the plain name's
// rules on reserved words and prefix, and under console only the console
// methods may appear.
func ValidateCapabilityName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("invalid capability name %q: must not be empty", name)
	case len(name) > MaxCapabilityNameLen:
		return fmt.Errorf("invalid capability name %s: longer than %d bytes", quoteTruncated(name), MaxCapabilityNameLen)
	}
	if strings.IndexByte(name, '.') >= 0 {
		return validateDotted(name)
	}
	if name[0] >= '0' && name[0] <= '9' {
		return fmt.Errorf("invalid capability name %q: must not start with a digit", name)
	}
	for i := 0; i < len(name); i++ {
		if !isIdentByte(name[i]) {
			return fmt.Errorf("invalid capability name %q: only ASCII letters, digits, _ and $ are allowed", name)
		}
	}
	if name == "console" {
		return fmt.Errorf("invalid capability name %q: console is the console object; grant console.log, console.info, console.warn, console.error or console.debug", name)
	}
	return checkGlobalSegment(name, name)
}

func validateDotted(name string) error {
	segs := strings.Split(name, ".")
	if len(segs) > MaxCapabilitySegments {
		return fmt.Errorf("invalid capability name %q: more than %d dot-separated segments", name, MaxCapabilitySegments)
	}
	for _, seg := range segs {
		if seg == "" {
			return fmt.Errorf("invalid capability name %q: empty segment", name)
		}
		for i := 0; i < len(seg); i++ {
			if !isIdentByte(seg[i]) && seg[i] != '-' {
				return fmt.Errorf("invalid capability name %q: only ASCII letters, digits, _, $ and - are allowed in a segment", name)
			}
		}
	}
	if segs[0] == "console" && (len(segs) != 2 || !slices.Contains(ConsoleMethods, segs[1])) {
		return fmt.Errorf("invalid capability name %q: under console only console.log, console.info, console.warn, console.error and console.debug are capabilities", name)
	}
	return checkGlobalSegment(name, segs[0])
}

// checkGlobalSegment checks the global name a capability defines.
func checkGlobalSegment(name, global string) error {
	if reservedWords[global] {
		return fmt.Errorf("invalid capability name %q: reserved word", name)
	}
	if strings.HasPrefix(global, ReservedPrefix) {
		return fmt.Errorf("invalid capability name %q: the prefix %s is reserved", name, ReservedPrefix)
	}
	return nil
}

// CheckNamespaces refuses a set of capability names in which one name is
// both a function and a namespace: `a` and `a.b`, or `a.b` and `a.b.c`.
// names must be sorted, as a Policy's are.
func CheckNamespaces(names []string) error {
	for i, n := range names {
		// A name's extensions sort after it, and the first of them
		// directly after its duplicates: n + "." sorts before any other
		// extension of n that is not a namespace path.
		for _, m := range names[i+1:] {
			if m == n {
				continue
			}
			if strings.HasPrefix(m, n+".") {
				return fmt.Errorf("invalid capability name %q: %q is both a function and a namespace", m, n)
			}
			if !strings.HasPrefix(m, n) {
				break
			}
		}
	}
	return nil
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

// quoteTruncated keeps errors for oversized names short.
func quoteTruncated(s string) string {
	const keep = 32
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:keep]+"...") + " (" + strconv.Itoa(len(s)) + " bytes)"
}

// reservedWords are the ES2023 ReservedWord productions, the words reserved
// in strict mode code, and globals whose shadowing would change the meaning
// of ordinary guest code.
var reservedWords = map[string]bool{
	// ES2023 ReservedWord.
	"await": true, "break": true, "case": true, "catch": true, "class": true,
	"const": true, "continue": true, "debugger": true, "default": true,
	"delete": true, "do": true, "else": true, "enum": true, "export": true,
	"extends": true, "false": true, "finally": true, "for": true,
	"function": true, "if": true, "import": true, "in": true,
	"instanceof": true, "new": true, "null": true, "return": true,
	"super": true, "switch": true, "this": true, "throw": true, "true": true,
	"try": true, "typeof": true, "var": true, "void": true, "while": true,
	"with": true, "yield": true,
	// Reserved in strict mode code.
	"implements": true, "interface": true, "let": true, "package": true,
	"private": true, "protected": true, "public": true, "static": true,
	// Restricted or well-known names.
	"eval": true, "arguments": true, "undefined": true, "NaN": true,
	"Infinity": true, "globalThis": true,
}

// Allows reports whether capability is in the policy.
func (p Policy) Allows(capability string) bool {
	_, found := slices.BinarySearch(p.Capabilities, capability)
	return found
}

// UnauthorizedCapabilityError is returned by Reassert; its message is part
// of the host contract.
type UnauthorizedCapabilityError struct {
	Capability string
}

func (e *UnauthorizedCapabilityError) Error() string {
	return "snapshot policy rejected unauthorized capability `" + e.Capability + "`"
}

// Reassert checks, on resume, that the capability a snapshot was suspended
// at is still granted, so a snapshot cannot be resumed under a policy that
// does not allow the call it is waiting on.
func (p Policy) Reassert(capability string) error {
	if p.Allows(capability) {
		return nil
	}
	return &UnauthorizedCapabilityError{Capability: capability}
}

// ID returns the policy_id: the lowercase hex SHA-256 of the policy's
// canonical encoding, so equal policies always have equal ids.
//
// The encoding (version "mustard-policy/1") is the RFC 8949 core
// deterministic CBOR encoding (definite lengths, shortest-form heads) of
//
//	[ "mustard-policy/1",
//	  [ capability, ... ],          // text strings, sorted bytewise, no duplicates
//	  [ instruction_budget, heap_limit_bytes, allocation_budget,
//	    call_depth_limit, max_outstanding_host_calls
//	    (, wall_time_ms (, max_log_bytes)) ] // unsigned integers
//	  (, "batch")                   // the host_calls mode, when not "one"
//	  (, "console:collect") ]       // the console mode, when not "off"
//
// with the limits fully resolved (defaults applied). wall_time_ms is there
// only when it is not 0 or max_log_bytes follows it, max_log_bytes only
// when it is not its default, the mode only when it is batch and the
// console only when it collects, so a policy without them keeps the id it
// had before they existed, and one with them can never share an id with
// one without. For example the default policy with no capabilities
// encodes as
//
//	83 70 "mustard-policy/1" 80 85 1a000f4240 1a00800000 1a0003d090 190100 1880
//
// Any change to this layout must change IDVersion.
func (p Policy) ID() string {
	var stack [512]byte // typical policies encode without a heap buffer
	sum := sha256.Sum256(p.AppendCanonical(stack[:0]))
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}

// consoleTag is the console mode's member of the canonical encoding.
const consoleTag = "console:collect"

// AppendCanonical appends the canonical encoding hashed by ID to b.
func (p Policy) AppendCanonical(b []byte) []byte {
	n := uint64(3)
	if p.HostCalls != HostCallsOne {
		n++
	}
	if p.Console != ConsoleOff {
		n++
	}
	b = detcbor.AppendHead(b, detcbor.MajorArray, n)
	b = detcbor.AppendText(b, IDVersion)
	b = detcbor.AppendHead(b, detcbor.MajorArray, uint64(len(p.Capabilities)))
	for _, c := range p.Capabilities {
		b = detcbor.AppendText(b, c)
	}
	l := p.Limits
	logs := l.MaxLogBytes != DefaultMaxLogBytes
	switch {
	case logs:
		b = append(b, 0x87) // array(7)
	case l.WallTimeMS != 0:
		b = append(b, 0x86) // array(6)
	default:
		b = append(b, 0x85) // array(5)
	}
	b = detcbor.AppendUint(b, l.InstructionBudget)
	b = detcbor.AppendUint(b, l.HeapLimitBytes)
	b = detcbor.AppendUint(b, l.AllocationBudget)
	b = detcbor.AppendUint(b, l.CallDepthLimit)
	b = detcbor.AppendUint(b, l.MaxOutstandingHostCalls)
	if l.WallTimeMS != 0 || logs {
		b = detcbor.AppendUint(b, l.WallTimeMS)
	}
	if logs {
		b = detcbor.AppendUint(b, l.MaxLogBytes)
	}
	if p.HostCalls != HostCallsOne {
		b = detcbor.AppendText(b, p.HostCalls.String())
	}
	if p.Console != ConsoleOff {
		b = detcbor.AppendText(b, consoleTag)
	}
	return b
}
