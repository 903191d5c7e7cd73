package host

import (
	"context"
	"errors"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/stretchr/testify/require"
)

// A Program's bytes of format version 1 or 2 (older sidecars' programs,
// metered by calls inserted into their text) never start: the sidecar
// refuses them with retired_program_format, on every transport and
// whether or not the client believes the process knows the id.
func TestStartRefusesRetiredProgramFormats(t *testing.T) {
	enc, err := cbor.CoreDetEncOptions().EncMode()
	require.NoError(t, err)
	for _, tr := range hosttest.Transports {
		t.Run(tr.Name, func(t *testing.T) {
			ctx := context.Background()
			c := newClient(t, Config{Cmd: sidecarCmd(t), JSONL: tr.JSONL})
			for _, version := range []uint64{1, 2} {
				b, err := enc.Marshal([]any{"mustard-program", version, "let s = 0; for (;;) s++"})
				require.NoError(t, err)
				for _, p := range []Program{{Bytes: b}, {ID: sha256Hex(b), Bytes: b}} {
					st, err := c.Start(ctx, StartRequest{Program: p})
					require.Nil(t, st)
					var e *Error
					require.True(t, errors.As(err, &e), "%v", err)
					require.Equal(t, "retired_program_format", e.Code)
					require.Equal(t, "Serialization: program bytes of format version 1 or 2 run only to resume their snapshots; compile the source again", e.Message)
				}
			}
		})
	}
}
