package value

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Seeds live in testdata/fuzz/<FuzzName>/ and run with plain go test.

// wellformedMode checks CBOR with a general decoder; its default nesting
// limit of 32 is below MaxDepth.
var wellformedMode = func() cbor.DecMode {
	dm, err := cbor.DecOptions{MaxNestedLevels: 2 * MaxDepth, MaxArrayElements: MaxArrayLength, MaxMapPairs: MaxArrayLength}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

// checkValue asserts the properties every decoded value has: it is valid,
// and it survives both codecs unchanged.
func checkValue(t *testing.T, v Value) {
	t.Helper()
	if err := v.Validate(); err != nil {
		t.Fatalf("decoded value is invalid: %v", err)
	}
	j := v.AppendJSON(nil)
	if !json.Valid(j) {
		t.Fatalf("AppendJSON wrote invalid JSON: %q", j)
	}
	vj, err := ParseJSON(j)
	if err != nil {
		t.Fatalf("re-parse %q: %v", j, err)
	}
	if !Equal(v, vj) {
		t.Fatalf("JSON round trip changed the value: %q", j)
	}
	if j2 := vj.AppendJSON(nil); !bytes.Equal(j, j2) {
		t.Fatalf("JSON encoding not stable: %q vs %q", j, j2)
	}
	c := v.AppendCBOR(nil)
	vc, rest, err := DecodeCBOR(c)
	if err != nil || len(rest) != 0 {
		t.Fatalf("re-decode %x: %v (rest %x)", c, err, rest)
	}
	if !Equal(v, vc) {
		t.Fatalf("CBOR round trip changed the value: %x", c)
	}
}

func FuzzParseJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseJSON(b)
		checkTranscode(t, b, v, err)
		if err != nil {
			if v.Kind != KindUndefined {
				t.Fatalf("value returned with error %v", err)
			}
			return
		}
		if !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		checkValue(t, v)
	})
}

func FuzzDecodeCBOR(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		v, rest, err := DecodeCBOR(b)
		// CheckCBOR accepts what DecodeCBOR accepts, with the same error
		// and the same rest.
		checkRest, checkErr := CheckCBOR(b)
		if fmt.Sprint(checkErr) != fmt.Sprint(err) || len(checkRest) != len(rest) {
			t.Fatalf("CheckCBOR(%x) = %d bytes left, %v; DecodeCBOR %d, %v", b, len(checkRest), checkErr, len(rest), err)
		}
		if err != nil {
			return
		}
		used := b[:len(b)-len(rest)]
		if err := wellformedMode.Wellformed(used); err != nil {
			t.Fatalf("accepted malformed CBOR %x: %v", used, err)
		}
		// The encoding is canonical: the accepted bytes are exactly what
		// the encoder writes for the value.
		if enc := v.AppendCBOR(nil); !bytes.Equal(enc, used) {
			t.Fatalf("decoded %x but encodes as %x", used, enc)
		}
		checkValue(t, v)
		checkEncoded(t, used, v)
		var u Value
		err = u.UnmarshalCBOR(b)
		if (err == nil) != (len(rest) == 0) {
			t.Fatalf("UnmarshalCBOR error %v with %d trailing bytes", err, len(rest))
		}
	})
}

func FuzzUTF16(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		units := make([]uint16, len(b)/2)
		for i := range units {
			units[i] = binary.LittleEndian.Uint16(b[2*i:])
		}
		s := FromUTF16(units)
		if !ValidWTF8(s) {
			t.Fatalf("FromUTF16(%x) = %q is not WTF-8", units, s)
		}
		if back := ToUTF16(s); len(units) > 0 && !slices.Equal(back, units) {
			t.Fatalf("round trip %x -> %q -> %x", units, s, back)
		}
		// As WTF-8 text, the bytes either round-trip or are invalid.
		str := string(b)
		if ValidWTF8(str) && FromUTF16(ToUTF16(str)) != str {
			t.Fatalf("WTF-8 round trip changed %q", str)
		}
		if IsASCII(str) && len(ToUTF16(str)) != len(str) {
			t.Fatalf("ASCII %q has the wrong UTF-16 length", str)
		}
	})
}

// readSeeds returns the inputs of a fuzz target's seed corpus by file name.
func readSeeds(t *testing.T, target string) map[string][]byte {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	seeds := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		lines := strings.SplitN(strings.TrimSpace(string(data)), "\n", 2)
		require.Len(t, lines, 2, e.Name())
		require.Equal(t, "go test fuzz v1", lines[0], e.Name())
		lit, ok := strings.CutPrefix(lines[1], "[]byte(")
		require.True(t, ok, e.Name())
		lit, ok = strings.CutSuffix(lit, ")")
		require.True(t, ok, e.Name())
		s, err := strconv.Unquote(lit)
		require.NoError(t, err, e.Name())
		seeds[e.Name()] = []byte(s)
	}
	return seeds
}

// Seeds named *_invalid must be rejected and all others accepted, so the
// corpus keeps covering both sides of every check.
func TestFuzzSeedsClassified(t *testing.T) {
	for name, b := range readSeeds(t, "FuzzParseJSON") {
		_, err := ParseJSON(b)
		if strings.HasSuffix(name, "_invalid") {
			assert.Error(t, err, name)
		} else if !strings.HasPrefix(name, "crash_") {
			assert.NoError(t, err, name)
		}
	}
	for name, b := range readSeeds(t, "FuzzDecodeCBOR") {
		_, _, err := DecodeCBOR(b)
		if strings.HasSuffix(name, "_invalid") {
			assert.Error(t, err, name)
		} else if !strings.HasPrefix(name, "crash_") {
			assert.NoError(t, err, name)
		}
	}
}

// checkTranscode: TranscodeJSON fails as ParseJSON does, with the same
// error, and otherwise writes what AppendCBOR writes for ParseJSON's value.
func checkTranscode(t *testing.T, b []byte, v Value, err error) {
	t.Helper()
	enc, terr := TranscodeJSON(b)
	if fmt.Sprint(terr) != fmt.Sprint(err) {
		t.Fatalf("TranscodeJSON(%q): error %v, ParseJSON %v", b, terr, err)
	}
	if err == nil && !bytes.Equal(enc, v.AppendCBOR(nil)) {
		t.Fatalf("TranscodeJSON(%q) = %x, ParseJSON's value encodes as %x", b, enc, v.AppendCBOR(nil))
	}
	// What it accepts is valid UTF-8 JSON: a request validator may take
	// a value it transcoded as validated.
	if err == nil && (!json.Valid(b) || !utf8.Valid(b)) {
		t.Fatalf("TranscodeJSON(%q) accepts text that is not valid UTF-8 JSON", b)
	}
	// TranscodeJSONValue reads the same value with more text after it,
	// and tells where the value's text ends.
	if err == nil {
		more := append(bytes.Clone(b), `,"next":["x"]}`...)
		venc, n, verr := TranscodeJSONValue(more)
		if verr != nil || !bytes.Equal(venc, enc) || n != len(bytes.TrimRight(b, " \t\r\n")) {
			t.Fatalf("TranscodeJSONValue(%q) = %x, %d, %v; want %x, the value's end", more, venc, n, verr, enc)
		}
	}
}
