package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// Defaults applied to limits a host leaves out or sets to null.
const (
	DefaultInstructionBudget       uint64 = 1_000_000
	DefaultHeapLimitBytes          uint64 = 8 << 20 // 8 MiB
	DefaultAllocationBudget        uint64 = 250_000
	DefaultCallDepthLimit          uint64 = 256
	DefaultMaxOutstandingHostCalls uint64 = 128
)

// NoWallTime is the default wall_time_ms: no wall-time limit.
const NoWallTime uint64 = 0

// DefaultMaxLogBytes is the default max_log_bytes: the UTF-8 bytes of
// console text one step may carry.
const DefaultMaxLogBytes uint64 = 256 << 10

// Limits are fully resolved execution limits. Zero is a real value meaning
// "none allowed", never "use the default".
type Limits struct {
	InstructionBudget       uint64 `json:"instruction_budget"`
	HeapLimitBytes          uint64 `json:"heap_limit_bytes"`
	AllocationBudget        uint64 `json:"allocation_budget"`
	CallDepthLimit          uint64 `json:"call_depth_limit"`
	MaxOutstandingHostCalls uint64 `json:"max_outstanding_host_calls"`

	// WallTimeMS bounds each start/resume segment in milliseconds of wall
	// time; 0 means no bound. Unlike the others it is not deterministic,
	// so it is never recorded in a snapshot's journal.
	WallTimeMS uint64 `json:"wall_time_ms"`

	// MaxLogBytes bounds the console text one step carries (the console
	// extension). Lines past it are dropped, which the guest cannot see,
	// so like WallTimeMS it is never recorded in a snapshot's journal.
	MaxLogBytes uint64 `json:"max_log_bytes"`
}

// DefaultLimits returns the limits used when a host specifies none.
func DefaultLimits() Limits {
	return Limits{
		InstructionBudget:       DefaultInstructionBudget,
		HeapLimitBytes:          DefaultHeapLimitBytes,
		AllocationBudget:        DefaultAllocationBudget,
		CallDepthLimit:          DefaultCallDepthLimit,
		MaxOutstandingHostCalls: DefaultMaxOutstandingHostCalls,
		MaxLogBytes:             DefaultMaxLogBytes,
	}
}

// LimitsSpec is the wire form of Limits (wire.Limits, with the sidecar's
// strict reading): a nil field means "default", which keeps an explicit
// zero distinguishable from an omitted value.
type LimitsSpec wire.Limits

// Resolve fills every unset field with its default.
func (s LimitsSpec) Resolve() Limits {
	return Limits{
		InstructionBudget:       orDefault(s.InstructionBudget, DefaultInstructionBudget),
		HeapLimitBytes:          orDefault(s.HeapLimitBytes, DefaultHeapLimitBytes),
		AllocationBudget:        orDefault(s.AllocationBudget, DefaultAllocationBudget),
		CallDepthLimit:          orDefault(s.CallDepthLimit, DefaultCallDepthLimit),
		MaxOutstandingHostCalls: orDefault(s.MaxOutstandingHostCalls, DefaultMaxOutstandingHostCalls),
		WallTimeMS:              orDefault(s.WallTimeMS, NoWallTime),
		MaxLogBytes:             orDefault(s.MaxLogBytes, DefaultMaxLogBytes),
	}
}

func orDefault(p *uint64, def uint64) uint64 {
	if p == nil {
		return def
	}
	return *p
}

// limitKeys are the wire names, in the order used by slot and by the
// policy_id encoding.
var limitKeys = [7]string{
	wire.FieldInstructionBudget,
	wire.FieldHeapLimitBytes,
	wire.FieldAllocationBudget,
	wire.FieldCallDepthLimit,
	wire.FieldMaxOutstandingHostCalls,
	wire.FieldWallTimeMS,
	wire.FieldMaxLogBytes,
}

// LimitNames are the wire names of every limit, in policy_id order.
func LimitNames() []string { return limitKeys[:] }

func (s *LimitsSpec) slot(i int) **uint64 {
	switch i {
	case 0:
		return &s.InstructionBudget
	case 1:
		return &s.HeapLimitBytes
	case 2:
		return &s.AllocationBudget
	case 3:
		return &s.CallDepthLimit
	case 4:
		return &s.MaxOutstandingHostCalls
	case 5:
		return &s.WallTimeMS
	default:
		return &s.MaxLogBytes
	}
}

// UnmarshalJSON decodes limits strictly. Each known field must be absent,
// null, or a plain non-negative JSON integer that fits in 64 bits; floats,
// exponents, signs, strings and booleans are rejected rather than coerced,
// because a silently rounded budget is a security bug. A whole-value null
// means all defaults. An unknown key is rejected (`unknown field `<key>` in
// limits`): a misspelt limit must never silently run on its default. A
// known key given twice is rejected, since JSON parsers disagree on which
// occurrence wins.
//
// Error messages reach hosts, so they name wire fields, not Go types.
// A key limits does not define is an *UnknownFieldError.
func (s *LimitsSpec) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*s = LimitsSpec{}
		return nil
	}
	if len(b) == 0 || b[0] != '{' {
		return errors.New("limits must be a JSON object")
	}

	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // the opening '{'
		return malformed(err)
	}
	var out LimitsSpec
	var seen [len(limitKeys)]bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return malformed(err)
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("limits must be a JSON object")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return malformed(err)
		}
		idx := slices.Index(limitKeys[:], key)
		if idx < 0 {
			return &UnknownFieldError{Field: key}
		}
		if seen[idx] {
			return fmt.Errorf("limits.%s appears more than once", key)
		}
		seen[idx] = true
		v, err := parseUint(key, raw)
		if err != nil {
			return err
		}
		*out.slot(idx) = v
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("limits: unexpected data after the JSON object")
	}
	*s = out
	return nil
}

// parseUint accepts null or the JSON grammar's integer form restricted to
// non-negative values: "0" or a non-zero digit followed by digits.
func parseUint(key string, raw json.RawMessage) (*uint64, error) {
	raw = bytes.TrimSpace(raw)
	if bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if !isPlainDigits(raw) {
		return nil, fmt.Errorf("limits.%s must be an unsigned integer", key)
	}
	v, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("limits.%s must be an unsigned integer no greater than 18446744073709551615", key)
	}
	return &v, nil
}

func isPlainDigits(b []byte) bool {
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// malformed turns a decoder error into a host-facing message. Syntax errors
// from encoding/json describe the input, not Go types, so they are kept.
func malformed(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("limits: malformed JSON: %s", se.Error())
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("limits: malformed JSON: unexpected end of input")
	}
	return errors.New("limits must be a JSON object")
}

// UnknownFieldError is a key of limits that no limit has: a misspelt limit
// fails rather than silently running on the default.
type UnknownFieldError struct{ Field string }

func (e *UnknownFieldError) Error() string {
	return "unknown field `" + e.Field + "` in limits"
}
