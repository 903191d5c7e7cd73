package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/version"
)

// logSession runs a session with every kind of outcome: a compile, a
// start and a resume that succeed, a resume refused (unknown snapshot_id),
// a start that hits its instruction budget. It returns the sidecar's exit
// code and stderr, and checks nothing but responses reached stdout.
func logSession(t *testing.T, tr transport, args ...string) (int, string, int) {
	h := newHost(t, tr)
	if len(args) > 0 {
		sc, err := hosttest.Start(append(tr.args(), args...)...)
		require.NoError(t, err)
		t.Cleanup(sc.Kill)
		h.sc = sc
	}
	id, _ := h.compile(fetchProgram)
	st := h.mustOK(h.start(id, []string{"fetch_data"}, nil))
	h.mustOK(h.resumeCached(st.SnapshotID(), st.PolicyID(), valuePayload(num(1))))
	bad := h.resumeCached(strings.Repeat("ab", 32), st.PolicyID(), valuePayload(num(1)))
	require.False(t, bad.OK())
	spin, _ := h.compile(`for (;;) {}`)
	opts := options(nil, nil)
	opts["limits"] = map[string]any{"instruction_budget": 5000}
	limited := h.do(h.req("start", "program_id", spin, "options", opts), nil, "")
	require.False(t, limited.OK())
	require.Equal(t, "limit_instruction_budget", limited.Header["error_code"])
	code, stderr := h.sc.Wait()
	require.Empty(t, h.sc.Leftover(), "nothing on stdout but the responses")
	return code, stderr, h.sc.Pid()
}

// Must hold: with --log-format json the sidecar logs one JSON record a
// line to stderr: its start (version, pid, transport), each request
// (method, duration, ok, error_code), limits hit, its exit; stdout
// carries only responses. Without the flag it logs nothing.
func TestE2ELogFormatJSON(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			code, stderr, pid := logSession(t, tr, "--log-format", "json")
			require.Equal(t, 0, code)
			var recs []map[string]any
			for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
				var m map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &m), "each stderr line is a JSON record: %q", line)
				recs = append(recs, m)
			}
			require.Equal(t, "sidecar started", recs[0]["msg"])
			require.Equal(t, version.Version, recs[0]["version"])
			require.Equal(t, float64(pid), recs[0]["pid"])
			require.Equal(t, tr.name, recs[0]["transport"])
			var methods []string
			var codes []string
			for _, r := range recs {
				switch r["msg"] {
				case "request":
					require.Equal(t, "INFO", r["level"])
					d, ok := r["duration"].(float64)
					require.True(t, ok && d > 0, "a duration in nanoseconds: %v", r)
					methods = append(methods, r["method"].(string))
					c, _ := r["error_code"].(string)
					require.Equal(t, c == "", r["ok"])
					codes = append(codes, c)
				case "limit hit":
					require.Equal(t, "WARN", r["level"])
					require.Equal(t, "start", r["method"])
					require.Equal(t, "limit_instruction_budget", r["error_code"])
					require.Equal(t, "Limit: instruction budget exhausted", r["error"])
				}
			}
			require.Equal(t, []string{"compile", "start", "resume", "resume", "compile", "start"}, methods)
			require.Equal(t, []string{"", "", "", "unknown_snapshot_id", "", "limit_instruction_budget"}, codes)
			require.Equal(t, "limit hit", recs[len(recs)-2]["msg"])
			require.Equal(t, "sidecar exiting", recs[len(recs)-1]["msg"])
			require.Equal(t, float64(0), recs[len(recs)-1]["exit_code"])
		})
	}
}

func TestE2ELogFormatTextAndOff(t *testing.T) {
	code, stderr, _ := logSession(t, transports[0], "--log-format", "text")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	require.Contains(t, lines[0], `level=INFO msg="sidecar started" version=`)
	require.Contains(t, stderr, "msg=request method=resume duration=")
	require.Contains(t, stderr, "ok=false error_code=unknown_snapshot_id")
	require.Contains(t, stderr, `level=WARN msg="limit hit" method=start error_code=limit_instruction_budget`)
	require.Contains(t, lines[len(lines)-1], `msg="sidecar exiting" exit_code=0`)

	code, stderr, _ = logSession(t, transports[1])
	require.Equal(t, 0, code)
	require.Empty(t, stderr, "no log without --log-format")

	sc, err := hosttest.Start("--log-format", "xml")
	require.NoError(t, err)
	t.Cleanup(sc.Kill)
	code, stderr = sc.Wait()
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `mustard-sidecar: --log-format must be text or json, got "xml"`)
}

// A fatal input is logged as an error record, and the contract's plain
// line still follows it for hosts that match it.
func TestE2ELogFormatFatal(t *testing.T) {
	sc, err := hosttest.Start("--log-format", "json")
	require.NoError(t, err)
	t.Cleanup(sc.Kill)
	require.NoError(t, sc.WriteBytes([]byte{1, 0, 0}))
	code, stderr := sc.Wait()
	require.Equal(t, 1, code)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	var fatal map[string]any
	for _, l := range lines {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "fatal error" {
			fatal = m
		}
	}
	require.NotNil(t, fatal, "stderr: %s", stderr)
	require.Equal(t, "ERROR", fatal["level"])
	require.True(t, strings.HasPrefix(fatal["error"].(string), "invalid request header"))
	require.Contains(t, lines, fatal["error"], "the plain line too")
	require.Empty(t, sc.Leftover())
}
