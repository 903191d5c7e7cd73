package engine_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
)

// Seeds in testdata/fuzz/FuzzLoadProgram are the program bytes of the
// transcripts in corpus/transcripts and forged variants of them (go run
// ./corpus/cmd/gen-transcripts -seeds).

// FuzzLoadProgram feeds LoadProgram arbitrary bytes: hosts send program
// bytes with a start, so they are untrusted.
func FuzzLoadProgram(f *testing.F) {
	if p, err := engine.Compile("const x = cap(1); x + 1;"); err == nil {
		f.Add(p.Bytes)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		orig := bytes.Clone(b)
		p, err := engine.LoadProgram(b)
		if !bytes.Equal(b, orig) {
			t.Fatal("LoadProgram modified its input")
		}
		if err != nil {
			var ee *engine.Error
			if !errors.As(err, &ee) {
				t.Fatalf("LoadProgram returned %T %q, want *engine.Error", err, err)
			}
			switch ee.Kind {
			case engine.KindSerialization, engine.KindParse, engine.KindValidation:
			default:
				t.Fatalf("LoadProgram failed with kind %s: %q", ee.Kind, err)
			}
			if p != nil {
				t.Fatalf("LoadProgram returned a program with error %v", err)
			}
			if strings.Contains(err.Error(), "cbor") || strings.Contains(err.Error(), "goroutine") {
				t.Fatalf("error text reveals internals: %q", err)
			}
			return
		}
		if !bytes.Equal(p.Bytes, b) {
			t.Fatalf("program bytes %x differ from the input %x", p.Bytes, b)
		}
		sum := sha256.Sum256(b)
		if p.ID != hex.EncodeToString(sum[:]) {
			t.Fatalf("program id %s is not the SHA-256 of its bytes", p.ID)
		}
		// One source, one artifact: compiling the source gives these bytes,
		// unless they are a format version 1 program (sloppy-mode code,
		// as older sidecars compiled it), which loads as such.
		// Older formats load as they were written: version 1 as sloppy-mode
		// code, version 2 metered by inserted calls.
		// A TypeScript program's artifact is an array of four: the
		// language follows the source.
		prefix := []byte("\x83\x6fmustard-program")
		if p.Language == engine.TypeScript {
			prefix[0] = 0x84
		}
		version := p.Version
		if !bytes.HasPrefix(b, prefix) || len(b) <= len(prefix) || uint64(b[len(prefix)]) != version {
			t.Fatalf("program bytes %x load as format version %d", b[:min(len(b), 24)], version)
		}
		if p.Strict() == (version == 1) {
			t.Fatalf("program bytes %x load as strict %v", b[:min(len(b), 24)], p.Strict())
		}
		if version != 3 {
			return
		}
		c, err := engine.CompileLanguage(p.Source, p.Language, engine.CompileOptions{})
		if err != nil {
			// Bytes an earlier sidecar compiled from a source with a
			// direct eval load (their snapshots resume); compiling that
			// source again is refused since.
			if strings.HasPrefix(err.Error(), "Validation: forbidden ambient global `eval`") {
				return
			}
			t.Fatalf("loaded program's source does not compile: %v", err)
		}
		if c.ID != p.ID || !bytes.Equal(c.Bytes, b) {
			t.Fatalf("Compile(source) gives program %s, LoadProgram %s", c.ID, p.ID)
		}
	})
}
