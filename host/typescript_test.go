package host

import (
	"context"
	"errors"
	"os/exec"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/require"
)

func TestCompileTypeScript(t *testing.T) {
	ctx := context.Background()
	src := "declare function fetch_data(n: number): number;\nenum K { A = 2 }\nconst v: number = fetch_data(K.A) as number;\nv! + 1"
	for _, tr := range hosttest.Transports {
		t.Run(tr.Name, func(t *testing.T) {
			c := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
			prog, err := c.CompileTypeScript(ctx, src)
			require.NoError(t, err)
			js, err := c.Compile(ctx, "const n = 1; n")
			require.NoError(t, err)
			tsSame, err := c.CompileTypeScript(ctx, "const n = 1; n")
			require.NoError(t, err)
			require.NotEqual(t, js.ID, tsSame.ID)

			st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: []string{"fetch_data"}})
			require.NoError(t, err)
			require.NotNil(t, st.Suspended)
			st, err = c.Resume(ctx, ResumeRequest{SnapshotID: st.Suspended.SnapshotID, PolicyID: st.Suspended.PolicyID,
				Key: testKey, Payload: Return(value.Number(41))})
			require.NoError(t, err)
			require.True(t, value.Equal(value.Number(42), st.Value))

			_, err = c.CompileTypeScript(ctx, "let a: = 1")
			var e *Error
			require.True(t, errors.As(err, &e), "%v", err)
			require.Equal(t, "parse", e.Code)
			require.Equal(t, "Parse: Unexpected \"=\" (1:8)", e.Message)
		})
	}
	pool, err := NewPool(PoolConfig{Size: 1, Command: func() *exec.Cmd { return sidecarCmd(t) }})
	require.NoError(t, err)
	defer pool.Close()
	prog, err := pool.CompileTypeScript(ctx, src)
	require.NoError(t, err)
	require.Len(t, prog.ID, 64)
}
