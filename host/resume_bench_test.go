package host

import (
	"context"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// BenchmarkResumeLargeAnswer is a hot resume answering a 50 KB text, as a
// host answering a search or a document read sends it: the request's
// encoding, the round trip over pipes and the next step's decoding.
func BenchmarkResumeLargeAnswer(b *testing.B) {
	ctx := context.Background()
	c, err := NewClient(Config{Cmd: sidecarCmd(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	prog, err := c.Compile(ctx, `let n = 0; for (;;) n += fetch_page(n).length;`)
	if err != nil {
		b.Fatal(err)
	}
	st, err := c.Start(ctx, StartRequest{Program: prog, Capabilities: []string{"fetch_page"}, Delivery: DeliverNone})
	if err != nil {
		b.Fatal(err)
	}
	answer := Return(value.String(strings.Repeat("lorem ipsum \"dolor\" sit <amet>, é\n", 1500)))
	b.SetBytes(int64(len(answer.value.Str)))
	for b.Loop() {
		s := st.Suspended
		if st, err = c.Resume(ctx, ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: testKey,
			Payload: answer, Delivery: DeliverNone}); err != nil {
			b.Fatal(err)
		}
	}
}
