package engine

import (
	"math"
	"strings"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
	"github.com/mustard-sidecar/mustard-sidecar/value"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// importEncodedCases are answers a replay reads straight from their
// encoding: holes, surrogates, keys that are special to objects, deep and
// wide shapes.
func importEncodedCases() map[string]value.Value {
	records := make([]value.Value, 300)
	for i := range records {
		records[i] = value.Object(value.M("id", value.Number(float64(i))), value.M("tags", value.Array(value.String("a"), value.String("b"))),
			value.M("title", value.String(strings.Repeat("t", i%50))), value.M("open", value.Bool(i%2 == 0)), value.M("none", value.Null()))
	}
	deep := value.Number(1)
	for range (value.MaxDepth - 1) / 2 { // an array and an object a level
		deep = value.Array(value.Object(value.M("d", deep)))
	}
	wide := make([]value.Member, 100)
	for i := range wide {
		wide[i] = value.M(strings.Repeat("k", i+1), value.Number(float64(i)))
	}
	return map[string]value.Value{
		"scalars":   value.Array(value.Undefined(), value.Null(), value.Bool(true), value.Number(math.Copysign(0, -1)), value.Number(math.NaN()), value.Number(math.Inf(-1)), value.Number(1e300)),
		"strings":   value.Array(value.String(""), value.String("ascii"), value.String("ж\U0001F600"), value.String("lone \xed\xa0\x80 surrogate")),
		"holes":     value.Array(value.Number(1), value.Hole(), value.Object(value.M("a", value.Array(value.Hole(), value.String("x"), value.Hole())))),
		"all holes": value.Array(value.Hole(), value.Hole()),
		"keys":      value.Object(value.M("__proto__", value.Number(1)), value.M("\xed\xb0\x80", value.Number(2)), value.M("", value.Number(3)), value.M("0", value.Number(4)), value.M("constructor", value.Null())),
		"empty":     value.Object(value.M("a", value.Array()), value.M("o", value.Object())),
		"records":   value.Object(value.M("items", value.Array(records...)), value.M("total", value.Number(300))),
		"deep":      deep,
		"wide":      value.Object(wide...),
		"string":    value.String(strings.Repeat("x", 100_000)),
	}
}

// A replay imports a journaled answer from its bytes (importEncoded); the
// hot run imported the decoded value (importValue). The guest must see the
// same values, and the execution must count and keep the same memory, or
// a cold resume would decide heap limits differently from a hot one.
func TestImportEncodedMatchesImportValue(t *testing.T) {
	const src = `
function d(v) {
  if (Array.isArray(v)) {
    const out = [];
    for (let i = 0; i < v.length; i++) out.push(i in v ? d(v[i]) : '<hole>');
    return ['array', v.length, Object.getOwnPropertyNames(v).length, out];
  }
  if (v !== null && typeof v === 'object')
    return ['object', Object.getPrototypeOf(v) === Object.prototype, Object.getOwnPropertyNames(v).map(k => [k, d(v[k])])];
  if (typeof v === 'number') return ['number', Object.is(v, -0) ? '-0' : String(v)];
  return [typeof v, v];
}
const r = cap(); globalThis.kept = r; cap(); cap(); JSON.stringify(d(r))`
	p, pol, h := roomyCapProgram(t, src)
	null := Payload{Outcome: snapshot.Outcome{Value: value.Null()}}
	for name, v := range importEncodedCases() {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, v.Validate())
			enc := v.AppendCBOR(nil)
			n, err := encodedBytes(value.NewEncodedView(enc))
			require.NoError(t, err)
			assert.Equal(t, importBytes(v), n, "counted from the bytes")

			x, step := testRuntime.Start(Config{Program: p, Header: h, Limits: pol.Limits})
			require.True(t, step.Suspended(), "%v", step.Err)
			x, step = x.Resume(Payload{Outcome: snapshot.Outcome{Value: v}}, pol.Limits)
			require.True(t, step.Suspended(), "%v", step.Err)
			raw := step.Snapshot
			x, step = x.Resume(null, pol.Limits)
			require.True(t, step.Suspended(), "%v", step.Err)
			hotKept := x.heap.retained
			_, hot := x.Resume(null, pol.Limits)
			require.NoError(t, hot.Err)

			snap, err := snapshot.Load(raw, nil)
			require.NoError(t, err)
			enc0, _ := snap.Suspensions[0].Answers[0].Outcome.Encoded()
			require.NotNil(t, enc0, "Load left the answer encoded")
			cx, cstep := testRuntime.Start(Config{Program: p, Header: snap.Header, Limits: pol.Limits, Journal: snap, Raw: raw,
				Answers: []Answer{{CallID: snap.Last().Focus, Payload: null}}})
			require.True(t, cstep.Suspended(), "%v", cstep.Err)
			assert.Equal(t, hotKept, cx.heap.retained, "what the execution keeps")
			_, cold := cx.Resume(null, pol.Limits)
			require.NoError(t, cold.Err)
			assert.True(t, value.Equal(hot.Value, cold.Value), "hot %s\ncold %s", hot.Value, cold.Value)
		})
	}
}

// Counting an answer from its bytes copies none of its strings.
// AllocsPerRun counts every allocation of the process, and the package's
// runtimes prepare realms on goroutines of their own (about 85
// allocations a realm): the count is taken over many runs, the least of
// three attempts, so that a realm prepared meanwhile cannot add a whole
// allocation a run.
func TestEncodedBytesCopiesNothing(t *testing.T) {
	enc := importEncodedCases()["records"].AppendCBOR(nil)
	least := math.Inf(1)
	for range 3 {
		least = min(least, testing.AllocsPerRun(500, func() {
			if _, err := encodedBytes(value.NewEncodedView(enc)); err != nil {
				panic(err)
			}
		}))
	}
	assert.LessOrEqual(t, least, 1.0, "allocations a count") // the reader itself, if it escapes
}
