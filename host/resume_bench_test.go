package host

import (
	"context"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// BenchmarkResumeLargeAnswer is a hot resume answering a 50 KB text, as a
// host answering a search or a document read sends it: the request's
// encoding, the round trip over pipes and the next step's decoding. In
// "echo" the guest passes each answer to its next call, so the step the
// host decodes carries the 50 KB back as its arguments.
func BenchmarkResumeLargeAnswer(b *testing.B) {
	for _, c := range []struct{ name, source string }{
		{"answer", `let n = 0; for (;;) n += fetch_page(n).length;`},
		{"echo", `let page = ""; for (;;) page = fetch_page(page.length, page);`},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			cl, err := NewClient(Config{Cmd: sidecarCmd(b)})
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			prog, err := cl.Compile(ctx, c.source)
			if err != nil {
				b.Fatal(err)
			}
			st, err := cl.Start(ctx, StartRequest{Program: prog, Capabilities: []string{"fetch_page"}, Delivery: DeliverNone})
			if err != nil {
				b.Fatal(err)
			}
			answer := Return(value.String(strings.Repeat("lorem ipsum \"dolor\" sit <amet>, é\n", 1500)))
			b.SetBytes(int64(len(answer.value.Str)))
			for b.Loop() {
				s := st.Suspended
				if st, err = cl.Resume(ctx, ResumeRequest{SnapshotID: s.SnapshotID, PolicyID: s.PolicyID, Key: testKey,
					Payload: answer, Delivery: DeliverNone}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
