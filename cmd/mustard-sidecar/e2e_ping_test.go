package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

var semverRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)

// ping answers with every field the contract names, in both transports,
// and sidecar_version is what --version prints.
func TestE2EPingAndVersion(t *testing.T) {
	t.Parallel()
	stdout, stderr, code, err := hosttest.Run("--version")
	require.NoError(t, err)
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	require.True(t, strings.HasSuffix(stdout, "\n") && strings.Count(stdout, "\n") == 1, "one line: %q", stdout)
	version := strings.TrimSuffix(stdout, "\n")
	require.Regexp(t, semverRE, version)

	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHost(t, tr)
			resp := h.mustOK(h.do(h.req("ping"), nil, ""))
			require.Empty(t, resp.Payload, "a pong carries no bytes")
			var pong struct {
				Kind             string            `json:"kind"`
				SidecarVersion   string            `json:"sidecar_version"`
				ProtocolVersions []int             `json:"protocol_versions"`
				Transport        string            `json:"transport"`
				Features         []string          `json:"features"`
				DefaultLimits    map[string]uint64 `json:"default_limits"`
				MaxRequestBytes  int               `json:"max_request_bytes"`
			}
			var env struct {
				Result json.RawMessage `json:"result"`
			}
			require.NoError(t, json.Unmarshal(resp.Raw, &env))
			d := json.NewDecoder(strings.NewReader(string(env.Result)))
			d.DisallowUnknownFields()
			require.NoError(t, d.Decode(&pong), "%s", env.Result)

			assert.Equal(t, "pong", pong.Kind)
			assert.Equal(t, version, pong.SidecarVersion, "ping and --version report the same version")
			assert.Equal(t, []int{2}, pong.ProtocolVersions)
			assert.Equal(t, tr.name, pong.Transport)
			assert.Equal(t, protocol.Features, pong.Features)
			for _, f := range []string{"cancel", "wall_time", "snapshot_delivery", "snapshot_fetch", "stage", "pinned_key", "sealed_snapshots"} {
				assert.Contains(t, pong.Features, f)
			}
			assert.Equal(t, map[string]uint64{
				"instruction_budget":         1_000_000,
				"heap_limit_bytes":           8 << 20,
				"allocation_budget":          250_000,
				"call_depth_limit":           256,
				"max_outstanding_host_calls": 128,
			}, pong.DefaultLimits)
			assert.Equal(t, 1_048_576, pong.MaxRequestBytes)

			// ping goes through the envelope checks like any request.
			bad := h.req("ping")
			bad["protocol_version"] = 1
			r := h.do(bad, nil, "")
			require.False(t, r.OK())
			require.Contains(t, r.Error(), "unsupported sidecar protocol version 1; expected 2")
			if !tr.jsonl {
				r := h.do(h.req("ping"), []byte("x"), "")
				require.False(t, r.OK())
				require.Equal(t, "ping requests must not include a binary payload", r.Error())
			}
			h.ping()
		})
	}
}
