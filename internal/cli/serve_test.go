package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/frame"
	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// hang bounds each test's wait for the sidecar: ten times what a quiet
// machine needs many times over; only a sidecar that stopped reading or
// answering reaches it.
const hang = 20 * time.Second

func ping(id int) []byte {
	return frame.Encode([]byte(`{"protocol_version":2,"id":`+itoa(id)+`,"method":"ping"}`), nil)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// served runs Serve over in and out on a goroutine; its result arrives on
// the returned channel.
func served(in io.Reader, out io.Writer) <-chan error {
	done := make(chan error, 1)
	go func() { done <- Serve(protocol.Options{}, in, out) }()
	return done
}

func wait(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(hang):
		t.Fatal("the sidecar did not end")
		return nil
	}
}

// responses decodes the binary responses in b.
func responses(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	r := frame.NewBinaryReader(bytes.NewReader(b))
	var out []map[string]any
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(f.Header, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
}

func TestServeFrameSplitAcrossReads(t *testing.T) {
	in := append(ping(1), ping(2)...)
	var out bytes.Buffer
	if err := wait(t, served(iotest.OneByteReader(bytes.NewReader(in)), &out)); err != nil {
		t.Fatal(err)
	}
	got := responses(t, out.Bytes())
	if len(got) != 2 || got[0]["id"] != 1.0 || got[1]["id"] != 2.0 || got[1]["ok"] != true {
		t.Fatalf("responses: %v", got)
	}
}

func TestServeEOFMidFrame(t *testing.T) {
	in := append(ping(1), ping(2)[:11]...)
	var out bytes.Buffer
	err := wait(t, served(bytes.NewReader(in), &out))
	if !errors.Is(err, frame.ErrTruncated) {
		t.Fatalf("error %v, want a truncated frame", err)
	}
	if got := responses(t, out.Bytes()); len(got) != 1 || got[0]["id"] != 1.0 {
		t.Fatalf("responses before the truncated frame: %v", got)
	}
}

func TestServeOversizedFrame(t *testing.T) {
	// Only the prefix is sent and the input stays open: a reader that
	// went on to read the body would wait for ever.
	pr, pw := io.Pipe()
	defer pw.Close()
	var out bytes.Buffer
	done := served(pr, &out)
	var prefix [8]byte
	binary.LittleEndian.PutUint32(prefix[0:4], frame.MaxRequestSize/2)
	binary.LittleEndian.PutUint32(prefix[4:8], frame.MaxRequestSize/2+1)
	go func() {
		_, _ = pw.Write(ping(1))
		_, _ = pw.Write(prefix[:])
	}()
	err := wait(t, done)
	if !errors.Is(err, frame.ErrFrameTooLarge) {
		t.Fatalf("error %v, want a frame too large", err)
	}
	if got := responses(t, out.Bytes()); len(got) != 1 || got[0]["id"] != 1.0 {
		t.Fatalf("responses before the oversized frame: %v", got)
	}
}

// TestServeCancelWhileRunning sends a cancel only once the start it
// cancels has been read: the serving goroutine runs the guest's endless
// loop, so only reading ahead can take the cancel in.
func TestServeCancelWhileRunning(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := served(inR, outW)
	defer func() {
		inW.Close()
		if err := wait(t, done); err != nil {
			t.Error(err)
		}
	}()
	rd := frame.NewBinaryReader(outR)
	recv := func() map[string]any {
		t.Helper()
		got := make(chan map[string]any, 1)
		go func() {
			f, err := rd.Next()
			if err != nil {
				got <- map[string]any{"read error": err.Error()}
				return
			}
			var m map[string]any
			_ = json.Unmarshal(f.Header, &m)
			got <- m
		}()
		select {
		case m := <-got:
			return m
		case <-time.After(hang):
			t.Fatal("no response")
			return nil
		}
	}
	send := func(header string) {
		t.Helper()
		if _, err := inW.Write(frame.Encode([]byte(header), nil)); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"protocol_version":2,"id":1,"method":"compile","source":"for(;;){}"}`)
	c := recv()
	res, _ := c["result"].(map[string]any)
	pid, _ := res["program_id"].(string)
	if pid == "" {
		t.Fatalf("compile: %v", c)
	}
	const big = 1_000_000_000_000_000
	send(`{"protocol_version":2,"id":2,"method":"start","program_id":"` + pid + `","options":{"inputs":{},"capabilities":[],` +
		`"limits":{"instruction_budget":` + itoa(big) + `,"allocation_budget":` + itoa(big) + `}}}`)
	// The write above returned once the start was read; the cancel's
	// returns once it is read ahead.
	send(`{"protocol_version":2,"id":3,"method":"cancel","target_id":2}`)
	st := recv()
	if st["id"] != 2.0 || st["ok"] != false || st["error_code"] != "limit_cancelled" {
		t.Fatalf("start: %v", st)
	}
	cn := recv()
	res, _ = cn["result"].(map[string]any)
	if cn["id"] != 3.0 || res["kind"] != "cancelled" || res["was_running"] != true {
		t.Fatalf("cancel: %v", cn)
	}
}

func TestReadError(t *testing.T) {
	err := readError(errors.New("read /proc/self/fd/0: input/output error"), "invalid request header")
	if strings.Contains(err.Error(), "/proc") || !strings.HasPrefix(err.Error(), "invalid request header") {
		t.Fatalf("%v", err)
	}
}

// The command's hook runs once per response written, after it is
// written: the host has its answer before any work between requests.
func TestServedAfterEachResponse(t *testing.T) {
	in := append(append(ping(1), ping(2)...), ping(3)...)
	var out bytes.Buffer
	var seen []int // responses written when the hook ran
	hook := func() { seen = append(seen, len(responses(t, out.Bytes()))) }
	if err := serve(protocol.Options{}, bytes.NewReader(in), &out, nil, nil, hook); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || seen[0] != 1 || seen[1] != 2 || seen[2] != 3 {
		t.Fatalf("hook saw %v responses written, want [1 2 3]", seen)
	}
}
