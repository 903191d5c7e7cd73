package jsonscan

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

type member struct{ key, value string }

func members(t testing.TB, b []byte) ([]member, bool) {
	t.Helper()
	var out []member
	ok := Members(b, func(k, v []byte) bool {
		out = append(out, member{string(k), string(v)})
		return true
	})
	return out, ok
}

func TestMembers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []member
	}{
		{`{}`, nil},
		{` { } `, nil},
		{`{"a":1}`, []member{{`"a"`, `1`}}},
		{"{ \"a\" :\t\"x,}\" ,\n\"b\":[1,{\"c\":\"]\"}], \"c\" : null }", []member{{`"a"`, `"x,}"`}, {`"b"`, `[1,{"c":"]"}]`}, {`"c"`, `null`}}},
		{`{"k\"}":{"x":"\\"},"n":-1.5e3}`, []member{{`"k\"}"`, `{"x":"\\"}`}, {`"n"`, `-1.5e3`}}},
		{`{"t":true,"f":false}`, []member{{`"t"`, `true`}, {`"f"`, `false`}}},
	} {
		got, ok := members(t, []byte(c.in))
		if !ok || len(got) != len(c.want) {
			t.Fatalf("%s: %q %v", c.in, got, ok)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: member %d is %q, want %q", c.in, i, got[i], c.want[i])
			}
		}
	}
	for _, in := range []string{``, `  `, `[1]`, `"{}"`, `null`} {
		if _, ok := members(t, []byte(in)); ok {
			t.Errorf("%q: accepted as an object", in)
		}
	}
}

func TestMembersStopsEarly(t *testing.T) {
	n := 0
	Members([]byte(`{"a":1,"b":2,"c":3}`), func(k, v []byte) bool {
		n++
		return string(k) != `"b"`
	})
	if n != 2 {
		t.Fatalf("fn called %d times, want 2", n)
	}
}

func TestPlainString(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want string
		ok   bool
	}{
		{`"abc"`, "abc", true},
		{`""`, "", true},
		{`"a\"b"`, "", false},
		{`"a\nb"`, "", false},
		{"\"a\x01\"", "", false},
		{`abc`, "", false},
		{`"`, "", false},
	} {
		got, ok := PlainString([]byte(c.raw))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.raw, got, ok, c.want, c.ok)
		}
	}
}

// Walking allocates nothing: that is what the package is for.
func TestMembersAllocatesNothing(t *testing.T) {
	b := []byte(`{"ok":true,"result":{"kind":"step","step":{"type":"suspended","args":[{"String":"x"}]}}}`)
	fn := func(k, v []byte) bool { return true }
	if n := testing.AllocsPerRun(100, func() { Members(b, fn) }); n != 0 {
		t.Fatalf("%v allocations per walk", n)
	}
}

// FuzzMembers: on every object encoding/json accepts, Members sees the
// same keys in the same order, and each value decodes to what
// encoding/json decodes for that key.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[true,{"c":"\"}"}],"d":null}`))
	f.Add([]byte(`{ "k\\" : "v\\\"" }`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		tok, _ := d.Token()
		if tok != json.Delim('{') {
			if _, ok := members(t, b); ok {
				t.Fatalf("%q: not an object, accepted", b)
			}
			return
		}
		got, ok := members(t, b)
		if !ok {
			t.Fatalf("%q: object refused", b)
		}
		for i := 0; d.More(); i++ {
			k, _ := d.Token()
			var v json.RawMessage
			if err := d.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if i >= len(got) {
				t.Fatalf("%q: %d members, encoding/json has more", b, len(got))
			}
			var gk string
			if err := json.Unmarshal([]byte(got[i].key), &gk); err != nil || gk != k {
				t.Fatalf("%q: member %d key %s, want %q", b, i, got[i].key, k)
			}
			if !bytes.Equal(bytes.TrimSpace([]byte(got[i].value)), bytes.TrimSpace(v)) {
				t.Fatalf("%q: member %d value %s, want %s", b, i, got[i].value, v)
			}
		}
		if _, err := d.Token(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestElements(t *testing.T) {
	for in, want := range map[string][]string{
		`[]`:                                 nil,
		` [ 1 , "a,]" ,{"b":[2,3]}, null ] `: {`1`, `"a,]"`, `{"b":[2,3]}`, `null`},
		`[[],[[]]]`:                          {`[]`, `[[]]`},
	} {
		var got []string
		if !Elements([]byte(in), func(e []byte) bool { got = append(got, string(e)); return true }) {
			t.Fatalf("%s: not an array", in)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{`{}`, `"[1]"`, ``, `1`} {
		if Elements([]byte(in), func([]byte) bool { return true }) {
			t.Errorf("%s: taken for an array", in)
		}
	}
	n := 0
	Elements([]byte(`[1,2,3]`), func([]byte) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("did not stop early: %d calls", n)
	}
}

// PlainRun stops at exactly the first quote, backslash, control character
// or non-ASCII byte, wherever it falls within a word.
func TestPlainRun(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
	for c := 0; c < 256; c++ {
		for n := 0; n < 20; n++ {
			for at := 0; at <= n; at++ {
				b := bytes.Repeat([]byte{'a'}, n)
				if at < n {
					b[at] = byte(c)
				}
				if at+1 < n {
					b[at+1] = '"' // a later one does not matter
				}
				want := n
				if at < n && special(byte(c)) {
					want = at
				} else if at+1 < n {
					want = at + 1
				}
				for start := 0; start <= min(at, 3); start++ {
					if got := PlainRun(b, start); got != want {
						t.Fatalf("byte %#x at %d of %d from %d: %d, want %d", c, at, n, start, got, want)
					}
				}
			}
		}
	}
}

// skipStringByByte is SkipString one byte at a time: the definition the
// word-at-a-time version must agree with.
func skipStringByByte(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// SkipString ends where a byte-by-byte scan does: at the first quote no
// odd run of backslashes escapes, wherever it falls within a word, and
// whatever bytes (0x80 and above, zero) sit around it.
func TestSkipString(t *testing.T) {
	fill := []byte{'a', 0, 0x80, 0xff, 0x21, 0x23, '\\'}
	for _, f := range fill {
		for n := 0; n < 20; n++ {
			for at := 0; at <= n; at++ {
				for slashes := 0; slashes <= 3; slashes++ {
					b := append([]byte{'"'}, bytes.Repeat([]byte{f}, n)...)
					if f == '\\' {
						b = append([]byte{'"'}, bytes.Repeat([]byte{'x'}, n)...)
					}
					if at < n {
						b[1+at] = '"'
						for k := 1; k <= slashes && at-k >= 0; k++ {
							b[1+at-k] = '\\'
						}
					}
					b = append(b, `"tail"`...)
					if got, want := SkipString(b, 0), skipStringByByte(b, 0); got != want {
						t.Fatalf("%q: %d, want %d", b, got, want)
					}
				}
			}
		}
	}
	// JSON text carried as a JSON string: an escaped quote every few bytes.
	inner, _ := json.Marshal(map[string]any{"rows": []any{"a", 1.5, true, `q"uote`, `back\slash`}})
	outer, _ := json.Marshal(string(bytes.Repeat(inner, 50)))
	outer = append(outer, `,"next":1`...)
	if got, want := SkipString(outer, 0), skipStringByByte(outer, 0); got != want || outer[got-1] != '"' || got != len(outer)-len(`,"next":1`) {
		t.Fatalf("nested JSON: %d, want %d", got, want)
	}
}

func FuzzSkipString(f *testing.F) {
	f.Add([]byte(`"a\"b\\\\"c"`))
	f.Add([]byte(`"\"\"\"\"\"\"\"\"\"\"\"\""`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			return
		}
		if got, want := SkipString(b, 0), skipStringByByte(b, 0); got != want {
			t.Fatalf("%q: %d, want %d", b, got, want)
		}
	})
}

// BenchmarkSkipString skips a 50 KB answer of JSON-like text sent as a
// JSON string: an escaped quote every dozen bytes.
func BenchmarkSkipString(b *testing.B) {
	var text strings.Builder
	for text.Len() < 50_000 {
		text.WriteString(`{"alpha_123456":[123456789012,"bravo1a2b3c4d",true],`)
	}
	enc, _ := json.Marshal(text.String())
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if SkipString(enc, 0) != len(enc) {
			b.Fatal("short")
		}
	}
}

func TestSpecialsBlockMarksExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// Bytes next to the ones that matter are where a borrow or a carry
	// would mark falsely: '#' after '"', ']' after '\\', ' ' after a
	// control character, and the bytes either side of each.
	alphabet := []byte{'"', '#', '!', '\\', ']', '[', 0x1f, ' ', 0x00, 0x01, 0x7f, 0x80, 0xff, 'a', 0x21, 0x5b, 0x5d}
	b := make([]byte, 64)
	for range 20000 {
		for j := range b {
			if r.IntN(3) == 0 {
				b[j] = byte(r.IntN(256))
			} else {
				b[j] = alphabet[r.IntN(len(alphabet))]
			}
		}
		var want uint64
		for j, c := range b {
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				want |= 1 << j
			}
		}
		if got := SpecialsBlock(b); got != want {
			t.Fatalf("SpecialsBlock(%q) = %064b, want %064b", b, got, want)
		}
	}
}
