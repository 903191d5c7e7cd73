package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// splitObject agrees with encoding/json on what each key holds, a repeated
// key's last value included, below and above the size from which it finds
// repeats through a map; keys keep the order of their first occurrence.
func TestSplitObjectRepeatedKeys(t *testing.T) {
	for _, n := range []int{1, 3, indexFrom - 1, indexFrom, indexFrom + 1, 200} {
		var b strings.Builder
		b.WriteString("{")
		var order []string
		for i := 0; i < n; i++ {
			k := fmt.Sprintf("k%d", i)
			order = append(order, k)
			fmt.Fprintf(&b, "%q:%d,", k, i)
		}
		// Repeat the first, a middle and the last key.
		fmt.Fprintf(&b, `"k0":"first again","k%d":[1],"k%d":{"x":null}}`, n/2, n-1)
		src := []byte(b.String())

		f, err := splitObject(src)
		require.NoError(t, err)
		var want map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(src, &want))
		require.Len(t, f, len(want), "n=%d", n)
		for i, fl := range f {
			require.Equal(t, order[i], fl.key, "n=%d: key order", n)
			require.JSONEq(t, string(want[fl.key]), string(fl.raw), "n=%d: %s", n, fl.key)
			got, ok := f.get(fl.key)
			require.True(t, ok)
			require.Equal(t, fl.raw, got)
		}
		_, ok := f.get("missing")
		require.False(t, ok)
	}
}

// Splitting a request whose keys are all the contract's allocates only
// the fields slice.
func TestSplitObjectAllocatesOnlyItsFields(t *testing.T) {
	b := []byte(`{"protocol_version":2,"id":7,"method":"resume","snapshot_id":"s","policy_id":"p","auth":{},"payload":{"type":"value","value":"Null"}}`)
	if n := testing.AllocsPerRun(100, func() { _, _ = splitObject(b) }); n != 1 {
		t.Fatalf("%v allocations per split, want 1", n)
	}
}

// The contract's methods are read without an allocation and as the decoder
// reads them; an escaped spelling still reads as the method.
func TestKnownMethods(t *testing.T) {
	for _, m := range []string{"compile", "start", "resume", "cancel", "snapshot", "stage", "ping"} {
		raw := []byte(`"` + m + `"`)
		got, ok := knownMethod(raw)
		if !ok || got != m {
			t.Fatalf("%s: %q %v", m, got, ok)
		}
		if n := testing.AllocsPerRun(100, func() { knownMethod(raw) }); n != 0 {
			t.Fatalf("%s: %v allocations", m, n)
		}
	}
	f, _, method, err := envelope([]byte(`{"protocol_version":2,"id":1,"method":"p\u0069ng"}`), true)
	if err != nil || method != "ping" || f == nil {
		t.Fatalf("escaped method: %q %v", method, err)
	}
	if _, _, _, err := envelope([]byte(`{"protocol_version":2,"id":1,"method":null}`), true); err == nil {
		t.Fatal("null method accepted")
	}
}
