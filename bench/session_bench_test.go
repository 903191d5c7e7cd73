package bench

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/hosttest"
	"github.com/mustard-sidecar/mustard-sidecar/internal/sampletext"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func handle(b *testing.B, s *protocol.Session, req map[string]any, payload []byte) map[string]any {
	resp, err := s.Handle(mustJSON(req), payload)
	if err != nil {
		b.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(resp.Header, &h); err != nil {
		b.Fatal(err)
	}
	if h["ok"] != true {
		b.Fatalf("request failed: %v", h["error"])
	}
	return h
}

// BenchmarkHotResume measures one suspend/resume round trip through the
// session (no IPC): resume a parked execution, which runs to the next
// capability call and suspends again.
func BenchmarkHotResume(b *testing.B) {
	s := protocol.NewSession(protocol.Options{})
	defer s.Close()
	src := "let n = 0; for (;;) { n += cap(n); }"
	h := handle(b, s, map[string]any{"protocol_version": 2, "id": 1, "method": "compile", "source": src}, nil)
	pid := h["result"].(map[string]any)["program_id"]
	h = handle(b, s, map[string]any{"protocol_version": 2, "id": 2, "method": "start", "program_id": pid,
		"options": map[string]any{"capabilities": []string{"cap"}, "limits": map[string]any{"instruction_budget": 1 << 40, "allocation_budget": 1 << 40}}}, nil)
	res := h["result"].(map[string]any)
	sid, pol := res["snapshot_id"].(string), res["policy_id"].(string)
	auth := hosttest.Auth(benchKey, sid)
	digest, keyB64 := auth["snapshot_key_digest"], auth["snapshot_key_base64"]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Built by hand so the harness costs little next to the sidecar.
		req := []byte(`{"protocol_version":2,"id":3,"method":"resume","snapshot_id":"` + sid + `","policy_id":"` + pol +
			`","auth":{"snapshot_key_base64":"` + keyB64.(string) + `","snapshot_key_digest":"` + digest.(string) +
			`","snapshot_token":"` + hosttest.Token(benchKey, sid) + `"},"payload":{"type":"value","value":{"Number":{"Finite":1.0}}}}`)
		resp, err := s.Handle(req, nil)
		if err != nil {
			b.Fatal(err)
		}
		at := bytes.Index(resp.Header, []byte(`"snapshot_id":"`))
		if at < 0 {
			b.Fatal(string(resp.Header))
		}
		sid = string(resp.Header[at+15 : at+15+64])
	}
}

// BenchmarkLargeAnswerResume measures one hot resume of the large-answers
// program with a ~50 KB answer and delta delivery, in-process: what a
// round trip of the 40 × 50 KB driver row costs without the pipes. Every
// 39 resumes the execution starts afresh so the journal stays in range.
func BenchmarkLargeAnswerResume(b *testing.B) {
	payloads, _ := textPayloads(LargeAnswers())
	benchLargeResume(b, largeSource, payloads)
}

// BenchmarkStructuredAnswerResume is the same for the structured answers
// program: a query result of ~50 KB as JSON per step.
func BenchmarkStructuredAnswerResume(b *testing.B) {
	payloads, _ := recordPayloads(StructuredAnswers())
	benchLargeResume(b, structuredSource, payloads)
}

// BenchmarkLargeAnswerResume1MB is the same with ~1 MB answers: 880 KB of
// JSON-like text, about the largest whose JSON escaping still fits one
// request (1 MiB).
func BenchmarkLargeAnswerResume1MB(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1000))
	answers := make([]string, largeCalls)
	for i := range answers {
		answers[i] = sampletext.JSONLike(r, 880_000)
	}
	payloads, _ := textPayloads(answers)
	benchLargeResume(b, largeSource, payloads)
}

// BenchmarkLargeArgsResume is BenchmarkLargeAnswerResume with a program
// that passes each 50 KB answer to its next call, as a guest handing a
// document from one tool to the next does: every step's suspension
// carries 50 KB of arguments back to the host.
func BenchmarkLargeArgsResume(b *testing.B) {
	payloads, _ := textPayloads(LargeAnswers())
	benchLargeResume(b, largeArgsSource, payloads)
}

// BenchmarkAccentedAnswerResume is BenchmarkLargeAnswerResume with every
// "e" of the answers written "é", as text in most languages but English
// has accents: the answer becomes UTF-16 in the guest, where an ASCII one
// stays as it came.
func BenchmarkAccentedAnswerResume(b *testing.B) {
	benchLargeResume(b, largeSource, accentedPayloads())
}

// BenchmarkAccentedArgsResume is BenchmarkLargeArgsResume with the
// answers of BenchmarkAccentedAnswerResume: a document with accents
// passed from one call to the next.
func BenchmarkAccentedArgsResume(b *testing.B) {
	benchLargeResume(b, largeArgsSource, accentedPayloads())
}

// accentedPayloads are the large answers with every "e" written "é".
func accentedPayloads() [][]byte {
	answers := LargeAnswers()
	for i, a := range answers {
		answers[i] = strings.ReplaceAll(a, "e", "é")
	}
	payloads, _ := textPayloads(answers)
	return payloads
}

// BenchmarkAwaitedAnswerResume is BenchmarkLargeAnswerResume with the
// program's calls awaited, as code mode writes them: the execution
// suspends at rest, its script's body waiting at an await.
func BenchmarkAwaitedAnswerResume(b *testing.B) {
	payloads, _ := textPayloads(LargeAnswers())
	benchLargeResume(b, awaitedSource, payloads)
}

// BenchmarkAwaitedColdResume is BenchmarkLargeColdResume for the
// program with its calls awaited.
func BenchmarkAwaitedColdResume(b *testing.B) {
	payloads, _ := textPayloads(LargeAnswers())
	benchLargeCold(b, awaitedSource, payloads)
}

// BenchmarkParallelAnswerResume is BenchmarkLargeAnswerResume with the
// program's calls made two at a time and waited for together
// (Promise.all), answered one at a time.
func BenchmarkParallelAnswerResume(b *testing.B) {
	payloads, _ := textPayloads(LargeAnswers())
	benchLargeResume(b, parallelSource, payloads)
}

// BenchmarkParallelColdResume is BenchmarkLargeColdResume for the
// program waiting for its calls two at a time.
func BenchmarkParallelColdResume(b *testing.B) {
	payloads, _ := textPayloads(LargeAnswers())
	benchLargeCold(b, parallelSource, payloads)
}

const parallelSource = "let total = 0;\nfor (let i = 0; i < 40; i += 2) {\n  const [a, b] = await Promise.all([fetch_page(i), fetch_page(i + 1)]);\n  total += a.length + b.length;\n}\ntotal;"

// BenchmarkLargeArgsColdResume resumes the last suspension of
// BenchmarkLargeArgsResume's program from its bytes in a fresh Session.
func BenchmarkLargeArgsColdResume(b *testing.B) {
	payloads, _ := textPayloads(LargeAnswers())
	benchLargeCold(b, largeArgsSource, payloads)
}

const largeArgsSource = "let page = '';\nfor (let i = 0; i < 40; i++) page = fetch_page(i, page);\npage.length;"

func benchLargeResume(b *testing.B, source string, payloads [][]byte) {
	s := protocol.NewSession(protocol.Options{})
	defer s.Close()
	h := handle(b, s, map[string]any{"protocol_version": 2, "id": 1, "method": "compile", "source": source}, nil)
	pid := h["result"].(map[string]any)["program_id"]
	start := func() (string, string) {
		h := handle(b, s, map[string]any{"protocol_version": 2, "id": 2, "method": "start", "program_id": pid, "snapshot_delivery": "delta",
			"options": map[string]any{"capabilities": []string{"fetch_page"}}}, nil)
		res := h["result"].(map[string]any)
		return res["snapshot_id"].(string), res["policy_id"].(string)
	}
	sid, pol := start()
	step := 0
	var req []byte
	b.SetBytes(int64(len(payloads[0])))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if step == largeCalls-1 {
			b.StopTimer()
			sid, pol = start()
			step = 0
			b.StartTimer()
		}
		req = resumeRequest(req[:0], 3, sid, pol, payloads[step])
		req = append(req[:len(req)-1], `,"snapshot_delivery":"delta"}`...)
		resp, err := s.Handle(req, nil)
		if err != nil {
			b.Fatal(err)
		}
		id, ok := snapshotIDOf(resp.Header)
		if !ok {
			b.Fatal(string(resp.Header))
		}
		sid = id
		step++
	}
}

// BenchmarkLargeColdResume resumes the last suspension of the 40 × 50 KB
// program from its bytes in a fresh Session, as the driver's cold row does
// without the pipes and the staging: authenticate, decode 39 compressed
// answers, replay them, deliver the 40th and run to completion.
func BenchmarkLargeColdResume(b *testing.B) {
	payloads, _ := textPayloads(LargeAnswers())
	benchLargeCold(b, largeSource, payloads)
}

// BenchmarkStructuredColdResume is BenchmarkLargeColdResume for the
// structured answers program: 39 query results of ~50 KB to replay.
func BenchmarkStructuredColdResume(b *testing.B) {
	payloads, _ := recordPayloads(StructuredAnswers())
	benchLargeCold(b, structuredSource, payloads)
}

func benchLargeCold(b *testing.B, source string, payloads [][]byte) {
	s := protocol.NewSession(protocol.Options{})
	pid := handleRaw(b, s, compileRequest(1, source), nil).Result.ProgramID
	req := startRequest(2, pid, noInputs, []byte(`["fetch_page"]`))
	var snap []byte
	var sid string
	for i := 0; i < largeCalls; i++ {
		resp, err := s.Handle(req, nil)
		if err != nil {
			b.Fatal(err)
		}
		r, err := parseResponse(resp.Header)
		if err != nil {
			b.Fatal(err)
		}
		snap, sid = bytes.Clone(resp.Payload), r.Result.SnapshotID
		if i < largeCalls-1 {
			req = resumeRequest(nil, 3, sid, r.Result.PolicyID, payloads[i])
		}
	}
	s.Close()
	req = rawResumeRequest(1, sid, []string{"fetch_page"}, payloads[largeCalls-1])
	b.ReportAllocs()
	for b.Loop() {
		s := protocol.NewSession(protocol.Options{})
		resp, err := s.Handle(req, snap)
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(resp.Header, []byte(`"completed"`)) {
			b.Fatalf("%.300s", resp.Header)
		}
		s.Close()
	}
	b.ReportMetric(float64(len(snap)), "snapshot-bytes")
}
