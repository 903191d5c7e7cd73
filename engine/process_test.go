package engine

import (
	"math"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/regexp2"
	"github.com/stretchr/testify/require"

	_ "time/tzdata" // the child's zone, wherever the machine keeps none
)

const processZoneEnv = "MUSTARD_ENGINE_ZONE_CHILD"

// Importing the engine changes nothing for the rest of the program: the
// process's time zone and regexp2's default timeout are as Go and regexp2
// set them, while guests still see UTC. Run in a child process started in
// another zone (time.Local cannot be changed while the runtime reads it).
func TestImportLeavesTheProcessAlone(t *testing.T) {
	if os.Getenv(processZoneEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestImportLeavesTheProcessAlone$", "-test.count=1")
		cmd.Env = append(os.Environ(), processZoneEnv+"=1", "TZ=Asia/Kolkata")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "PASS")
		return
	}
	require.Equal(t, "Asia/Kolkata", time.Local.String(), "the engine set time.Local")
	require.Equal(t, time.Duration(math.MaxInt64), regexp2.DefaultMatchTimeout, "the engine set regexp2's default timeout")
	run := runGuest(guestCase{src: `const d = new Date(0);
	[d.getHours(), d.getTimezoneOffset(), String(d), new Date(1970, 0, 1).getTime(), d.toLocaleTimeString('en-GB')]`})
	require.NoError(t, run.err)
	require.Equal(t, fmtValue(jsA(jsN(0), jsN(0), jsS("Thu Jan 01 1970 00:00:00 GMT+0000 (UTC)"), jsN(0), jsS("00:00:00"))), fmtValue(run.step.Value))
}
