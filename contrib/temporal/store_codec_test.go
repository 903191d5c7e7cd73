package mustardtemporal

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"

	"github.com/mustard-sidecar/mustard-sidecar/host"
	"github.com/mustard-sidecar/mustard-sidecar/host/durable"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

func TestBlobStores(t *testing.T) {
	ctx := context.Background()
	for _, url := range []string{"mem://", "file://" + t.TempDir() + "?prefix=mustard/"} {
		t.Run(strings.SplitN(url, ":", 2)[0], func(t *testing.T) {
			s, err := OpenBucket(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			big := bytes.Repeat([]byte("snapshot"), 512<<10) // 4 MiB
			id := sha256Hex(big)
			if err := s.Put(ctx, SnapshotKey(id), big); err != nil {
				t.Fatal(err)
			}
			got, err := getVerified(ctx, s, SnapshotKey(id), id)
			if err != nil || !bytes.Equal(got, big) {
				t.Fatalf("round trip: %d bytes, %v", len(got), err)
			}
			if _, err := getVerified(ctx, s, SnapshotKey(id), sha256Hex([]byte("other"))); err == nil {
				t.Error("bytes under the wrong id were accepted")
			}
			if err := s.Delete(ctx, SnapshotKey(id)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, SnapshotKey(id)); !errors.Is(err, ErrBlobNotFound) {
				t.Errorf("get after delete: %v, want ErrBlobNotFound", err)
			}
			if err := s.Delete(ctx, SnapshotKey(id)); err != nil {
				t.Errorf("deleting a missing key: %v", err)
			}
		})
	}
}

func TestCodec(t *testing.T) {
	c, err := NewCodec(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewCodec(bytes.Repeat([]byte{2}, 32))
	if _, err := NewCodec(make([]byte, 16)); err == nil {
		t.Error("a 16-byte key was accepted")
	}
	dc := c.DataConverter()
	p, err := dc.ToPayload(map[string]string{"answer": "MARKER-CODEC-1"})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := converter.GetDefaultDataConverter().ToPayload(map[string]string{"answer": "MARKER-CODEC-1"})
	enc, err := c.Encode([]*commonpb.Payload{plain})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []*commonpb.Payload{p, enc[0]} {
		b, _ := q.Marshal()
		if bytes.Contains(b, []byte("MARKER")) || string(q.Metadata["encoding"]) != Encoding {
			t.Fatalf("encoded payload shows its content: %q", b)
		}
	}
	var back map[string]string
	if err := dc.FromPayload(p, &back); err != nil || back["answer"] != "MARKER-CODEC-1" {
		t.Fatalf("round trip: %v %v", back, err)
	}
	if _, err := other.Decode(enc); !errors.Is(err, ErrCodecKey) {
		t.Errorf("decoding under another key: %v", err)
	}
	enc[0].Data[len(enc[0].Data)-1] ^= 1
	if _, err := c.Decode(enc); err == nil {
		t.Error("a tampered payload was decoded")
	}
	if out, err := c.Decode([]*commonpb.Payload{plain}); err != nil || out[0] != plain {
		t.Errorf("a payload without the codec's encoding did not pass through: %v", err)
	}
}

// countingStore is a BlobStore that remembers the largest Put.
type countingStore struct {
	BlobStore
	mu  sync.Mutex
	max int
}

func (s *countingStore) Put(ctx context.Context, key string, b []byte) error {
	s.mu.Lock()
	s.max = max(s.max, len(b))
	s.mu.Unlock()
	return s.BlobStore.Put(ctx, key, b)
}

const markerSource = `
async function main() {
  const a = await lookup({ q: secret });
  const b = await lookup({ q: "MARKER-ARG-4417" });
  return a + "|" + b;
}
main();
`

// No plaintext of inputs, arguments, answers or results in what Temporal
// stores (every payload through the codec), nor in the blob store
// (sealed snapshots); without sealing the blob store shows them.
func TestNoPlaintextAtRest(t *testing.T) {
	markers := []string{"MARKER-INPUT-7f3a", "MARKER-ARG-4417", "MARKER-ANSWER-9921"}
	// run returns the blob store's contents while the second call runs,
	// when the snapshot holds the input, the first answer and the second
	// argument (the execution deletes its snapshots as it ends).
	run := func(t *testing.T, unsealed bool) (map[string][]byte, *harness) {
		blobs := memStore(t)
		w := newSidecar(t, "a", blobs, func(c *SidecarConfig) {
			if unsealed {
				c.SealKey, c.Unsealed = host.SealKey{}, true
			}
		})
		parked := map[string][]byte{}
		tools := map[string]durable.Capability{
			"lookup": func(ctx context.Context, c durable.Call) (value.Value, error) {
				var q struct{ Q string }
				if err := c.Decode(&q); err != nil {
					return value.Value{}, err
				}
				if c.ID == 2 {
					for _, k := range keys(t, blobs) {
						b, err := blobs.Get(ctx, k)
						if err != nil {
							return value.Value{}, err
						}
						parked[k] = b
					}
				}
				return value.String("MARKER-ANSWER-9921:" + q.Q), nil
			},
		}
		h := newHarness(t, tools, w)
		h.env.ExecuteWorkflow(WorkflowName, Execution{Source: markerSource, Capabilities: capsOf(tools), Queue: testQueue,
			Inputs: map[string]value.Value{"secret": value.String("MARKER-INPUT-7f3a")}})
		got := result(t, h)
		want := "MARKER-ANSWER-9921:MARKER-INPUT-7f3a|MARKER-ANSWER-9921:MARKER-ARG-4417"
		if got.Str != want {
			t.Fatalf("result %s", got.AppendJSON(nil))
		}
		return parked, h
	}
	blobs, h := run(t, false)
	h.codec.mu.Lock()
	encoded := h.codec.out
	h.codec.mu.Unlock()
	var decoded []byte
	for _, b := range encoded {
		var p commonpb.Payload
		if err := p.Unmarshal(b); err != nil {
			t.Fatal(err)
		}
		out, err := h.codec.Decode([]*commonpb.Payload{&p})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := out[0].Marshal()
		decoded = append(decoded, d...)
	}
	for _, m := range markers {
		for _, b := range encoded {
			if bytes.Contains(b, []byte(m)) {
				t.Errorf("a history payload holds %s in the clear", m)
			}
		}
		if !bytes.Contains(decoded, []byte(m)) {
			t.Errorf("%s never went through the codec: the check above proves nothing", m)
		}
	}
	snaps := 0
	for k, b := range blobs {
		snaps += strings.Count(k, "snapshots/")
		for _, m := range markers {
			if bytes.Contains(b, []byte(m)) {
				t.Errorf("blob %s holds %s in the clear", k, m)
			}
		}
	}
	if snaps == 0 {
		t.Fatal("no snapshot in the blob store")
	}

	// The same check finds the markers in unsealed snapshots.
	blobs, _ = run(t, true)
	found := false
	for _, b := range blobs {
		found = found || bytes.Contains(b, []byte("MARKER-ANSWER-9921"))
	}
	if !found {
		t.Error("unsealed snapshots do not show the answers: the blob check proves nothing")
	}
}

// A guest that keeps 5 MB of tool answers: snapshots past Temporal's 2 MB
// payload limit go through the blob store, hot and cold.
func TestLargeSnapshot(t *testing.T) {
	blobs := &countingStore{BlobStore: memStore(t)}
	w := newSidecar(t, "a", blobs)
	tools := map[string]durable.Capability{
		"chunk": func(ctx context.Context, c durable.Call) (value.Value, error) {
			if c.ID == 4 {
				w.Kill() // the next segment resumes from the bytes
			}
			// Random letters: the sidecar compresses snapshots.
			rng := rand.New(rand.NewPCG(c.ID, 1))
			b := make([]byte, 900_000)
			for i := range b {
				b[i] = byte('A' + rng.IntN(58))
			}
			return value.String(string(b)), nil
		},
	}
	h := newHarness(t, tools, w)
	// The guest keeps its chunks, so its snapshots are the journal of
	// them (a checkpoint's image would be larger).
	src := `let n = 0; const kept = []; for (let i = 0; i < 8; i++) { const c = chunk(i); kept.push(c); n += c.length; } n;`
	h.env.ExecuteWorkflow(WorkflowName, Execution{Source: src, Capabilities: capsOf(tools), Queue: testQueue})
	got := result(t, h)
	if got.Num != 8*900_000 {
		t.Fatalf("result %s", got.AppendJSON(nil))
	}
	if blobs.max < 5_000_000 {
		t.Errorf("largest snapshot %d bytes, want over 5 MB", blobs.max)
	}
	if st := w.Stats(); st.Cold < 1 || st.Hot < 1 {
		t.Errorf("segments %+v, want hot and cold resumes", st)
	}
	t.Logf("largest snapshot %d bytes; segments %+v", blobs.max, w.Stats())
}

// Answers that together pass the sidecar's 1 MiB request limit are given
// to the guest over several resumes.
func TestLargeParallelAnswers(t *testing.T) {
	blobs := memStore(t)
	w := newSidecar(t, "a", blobs)
	b := newBarrier(3)
	tools := map[string]durable.Capability{
		"chunk": func(ctx context.Context, c durable.Call) (value.Value, error) {
			if err := b.wait(ctx); err != nil {
				return value.Value{}, err
			}
			rng := rand.New(rand.NewPCG(c.ID, 2))
			s := make([]byte, 700_000)
			for i := range s {
				s[i] = byte('A' + rng.IntN(58))
			}
			return value.String(string(s)), nil
		},
	}
	h := newHarness(t, tools, w)
	src := `async function main() {
  const parts = await Promise.all([chunk(1), chunk(2), chunk(3)]);
  return parts.map((p) => p.length);
}
main();`
	h.env.ExecuteWorkflow(WorkflowName, Execution{Source: src, Capabilities: capsOf(tools), Queue: testQueue})
	got := result(t, h)
	want := value.Array(value.Number(700_000), value.Number(700_000), value.Number(700_000))
	if !value.Equal(got, want) {
		t.Fatalf("result %s", got.AppendJSON(nil))
	}
}
