package host

import (
	"math"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	nan     = math.NaN()
	negZero = math.Copysign(0, -1)
)

func newPool(t *testing.T, size int) *Pool {
	t.Helper()
	p, err := NewPool(PoolConfig{Size: size, Command: func() *exec.Cmd { return sidecarCmd(t) }})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}
