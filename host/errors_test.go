package host

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// The sentinels match by error_code; a sidecar that sends no code (one
// older than the error_codes feature) gets the codes a host acts on from
// its text.
func TestErrorCodesAndSentinels(t *testing.T) {
	for _, tc := range []struct {
		msg, sent, code string
		is              []error
	}{
		{"unknown snapshot_id `ab`", "unknown_snapshot_id", "unknown_snapshot_id", []error{ErrUnknownSnapshotID}},
		{"unknown snapshot_id `ab`", "", "unknown_snapshot_id", []error{ErrUnknownSnapshotID}},
		{"unknown policy_id `ab`", "", "unknown_policy_id", []error{ErrUnknownPolicyID}},
		{"unknown program_id `ab`", "", "unknown_program_id", []error{ErrUnknownProgramID}},
		{"unknown snapshot_id `ab`", "evicted_snapshot_id", "evicted_snapshot_id", []error{ErrUnknownSnapshotID}},
		{"unknown policy_id `ab`", "evicted_policy_id", "evicted_policy_id", []error{ErrUnknownPolicyID}},
		{"unknown program_id `ab`", "evicted_program_id", "evicted_program_id", []error{ErrUnknownProgramID}},
		{"raw snapshot restore rejected a tampered or unauthenticated snapshot", "", "tampered_snapshot", []error{ErrTamperedSnapshot}},
		{"snapshot was sealed under another seal key", "", "wrong_seal_key", []error{ErrSealKey}},
		{"snapshot is sealed and no seal key was given", "seal_key_required", "seal_key_required", []error{ErrSealKey}},
		{"Limit: execution cancelled", "", "limit_cancelled", []error{ErrLimit}},
		{"Limit: heap limit exceeded", "limit_heap", "limit_heap", []error{ErrLimit}},
		{"Limit: something new", "", "limit", []error{ErrLimit}},
		{"Runtime: TypeError: bad", "", "runtime", nil},
		{"unknown method \"x\"", "", "", nil},
		// The code wins over the text.
		{"unknown snapshot_id `ab`", "invalid_field", "invalid_field", nil},
	} {
		err := error(newError("resume", &response{Error: tc.msg, ErrorCode: tc.sent}))
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, tc.code, e.Code, tc.msg)
		require.Equal(t, tc.msg, e.Error())
		for _, s := range []error{ErrUnknownSnapshotID, ErrUnknownPolicyID, ErrUnknownProgramID, ErrTamperedSnapshot, ErrSealKey, ErrLimit} {
			want := false
			for _, w := range tc.is {
				want = want || w == s
			}
			require.Equal(t, want, errors.Is(err, s), "%s is %s", tc.msg, s)
		}
	}
}

// A guest failure's name, message, position and frames are fields.
func TestErrorReadsTheGuestFailure(t *testing.T) {
	for _, tc := range []struct {
		msg, name, text string
		line, col       int
		stack           []Frame
	}{
		{"Runtime: TypeError: bad\n  at f (2:9)\n  at <script> (4:2)", "TypeError", "bad", 2, 9,
			[]Frame{{"f", 2, 9}, {"<script>", 4, 2}}},
		{"Runtime: Error: two\nlines\n  at <anonymous> (1:5)", "Error", "two\nlines", 1, 5, []Frame{{"<anonymous>", 1, 5}}},
		{"Runtime: ToolError: service unavailable", "ToolError", "service unavailable", 0, 0, nil},
		{"Runtime: RangeError", "RangeError", "", 0, 0, nil},
		{"Runtime: result cannot cross the boundary: a function", "", "result cannot cross the boundary: a function", 0, 0, nil},
		{"Parse: Unexpected identifier (1:17)", "", "Unexpected identifier", 1, 17, nil},
		{"Limit: instruction budget exhausted", "", "instruction budget exhausted", 0, 0, nil},
		{"unknown snapshot_id `ab`", "", "", 0, 0, nil},
	} {
		e := newError("start", &response{Error: tc.msg})
		require.Equal(t, tc.name, e.GuestName, tc.msg)
		require.Equal(t, tc.text, e.GuestMessage, tc.msg)
		require.Equal(t, tc.line, e.Line, tc.msg)
		require.Equal(t, tc.col, e.Column, tc.msg)
		require.Equal(t, tc.stack, e.Stack, tc.msg)
	}
}
