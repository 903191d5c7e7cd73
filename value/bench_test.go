package value

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/internal/sampletext"
)

func BenchmarkAppendJSON(b *testing.B) {
	v := realisticValue()
	buf := v.AppendJSON(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = v.AppendJSON(buf[:0])
	}
}

func BenchmarkParseJSON(b *testing.B) {
	in := realisticValue().AppendJSON(nil)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseJSON(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTranscodeJSON is a resume's answer on its way to the journal
// and the guest: ParseJSON then AppendCBOR, against TranscodeJSON.
func BenchmarkTranscodeJSON(b *testing.B) {
	in := realisticValue().AppendJSON(nil)
	b.Run("parse+encode", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			v, err := ParseJSON(in)
			if err != nil {
				b.Fatal(err)
			}
			buf = v.AppendCBOR(buf[:0])
		}
	})
	b.Run("transcode", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := TranscodeJSON(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendCBOR(b *testing.B) {
	v := realisticValue()
	buf := v.AppendCBOR(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = v.AppendCBOR(buf[:0])
	}
}

func BenchmarkDecodeCBOR(b *testing.B) {
	in := realisticValue().AppendCBOR(nil)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeCBOR(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	v := realisticValue()
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTranscodeJSONText is a tool's answer of 50 KB of text that is
// itself JSON: one long string with an escape every dozen bytes.
func BenchmarkTranscodeJSONText(b *testing.B) {
	in := String(sampletext.JSONLike(rand.New(rand.NewPCG(1, 2)), 50_000)).AppendJSON(nil)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := TranscodeJSON(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnescapeText unescapes 50 KB strings of several kinds into a
// buffer kept from one run to the next: JSON text (an escape every dozen
// bytes), prose, accented prose, Japanese as UTF-8, and the same escaped
// as \uXXXX (Python's json.dumps by default).
func BenchmarkUnescapeText(b *testing.B) {
	jp := strings.Repeat("日本語のテキスト、", 1900)
	var escaped strings.Builder
	for _, r := range jp {
		fmt.Fprintf(&escaped, `\u%04x`, r)
	}
	for _, c := range []struct{ name, json string }{
		{"json", string(String(sampletext.JSONLike(rand.New(rand.NewPCG(1, 2)), 50_000)).AppendJSON(nil))},
		{"prose", string(String(strings.Repeat("The quick brown fox jumps over the lazy dog, said \"the\" owner.\n", 800)[:50_000]).AppendJSON(nil))},
		{"accents", string(String(strings.Repeat("Crème brûlée à la française, très réussie. ", 1100)).AppendJSON(nil))},
		{"utf8", string(String(jp).AppendJSON(nil))},
		{"u-escapes", `{"String":"` + escaped.String() + `"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			in := []byte(c.json)
			const at = len(`{"String":"`)
			dst := make([]byte, 0, len(in))
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				d := jsonDecoder{b: in, i: at - 1}
				if _, err := d.unescape(dst[:0], at); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendJSONText writes 50 KB answers of text as a host sends
// them: prose with a quote or newline now and then, and the same as JSON
// text (an escape every dozen bytes).
func BenchmarkAppendJSONText(b *testing.B) {
	for _, c := range []struct {
		name string
		text string
	}{
		{"prose", strings.Repeat("The quick brown fox jumps over the lazy dog, said \"the\" owner.\n", 800)[:50_000]},
		{"json", sampletext.JSONLike(rand.New(rand.NewPCG(1, 2)), 50_000)},
	} {
		b.Run(c.name, func(b *testing.B) {
			v := String(c.text)
			buf := v.AppendJSON(nil)
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for b.Loop() {
				buf = v.AppendJSON(buf[:0])
			}
		})
	}
}
