package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A tiny gallery in the reference's layout: a subdirectory with a catalog
// (CommonJS, named .ts as the reference names them) and program files.
var testGallery = map[string]string{
	"demo/catalog.ts": `'use strict';
module.exports = [
  {
    id: 'demo_lookup',
    file: 'lookup.js',
    inputs: { ids: ['a', 'b', 'c'] },
    options: {
      capabilities: {
        async get_item(id, opts) {
          if (id === 'b') {
            const e = new Error('no item ' + id);
            e.code = 'NOT_FOUND';
            throw e;
          }
          return { id, price: id.charCodeAt(0), currency: opts.currency };
        },
        async save_total(total) {
          return { saved: total };
        },
      },
    },
  },
  {
    id: 'demo_plan',
    file: 'plan.js',
    options: { inputs: { n: 2 } },
    startPlan: {
      capabilities: { first() {}, second() {} },
      resumes: [{ x: 1 }, { capability: 'second', value: [4, 5] }],
    },
  },
  {
    id: 'demo_settled',
    file: 'settled.js',
    options: {
      capabilities: {
        async check(i) {
          if (i === 2) throw new Error('down');
          return i * 10;
        },
      },
    },
  },
  { id: 'demo_missing', file: 'missing.js', options: { capabilities: {} } },
];
`,
	"demo/lookup.js": `async function main() {
  const items = await Promise.all(ids.map(async (id) => {
    try {
      return await get_item(id, { currency: 'EUR' });
    } catch (e) {
      return { id, missing: e.code };
    }
  }));
  const total = items.reduce((s, i) => s + (i.price || 0), 0);
  const r = await save_total(total);
  return { items, saved: r.saved };
}
main();
`,
	"demo/plan.js": "const a = first(n);\nconst b = second(a.x + n);\n({ a, b });\n",
	// A call in a plain map callback called from an async function is
	// asynchronous (an async function is on the stack): a host error
	// rejects its promise, on the reference and here.
	"demo/settled.js":  "async function main() {\n  const r = await Promise.allSettled([1, 2, 3].map((i) => check(i)));\n  return r.map((x) => x.status);\n}\nmain();\n",
	"notes/readme.txt": "not a catalog directory",
}

func TestRecordGallery(t *testing.T) {
	requirePeer(t)
	root := t.TempDir()
	for name, text := range testGallery {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, skipped, err := RecordGallery(Config{}, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range skipped {
		t.Log("left out:", s)
	}
	var names []string
	for _, w := range ws {
		names = append(names, w.Name)
		if w.Group != GalleryGroup {
			t.Errorf("%s: group %q", w.Name, w.Group)
		}
	}
	if !slices.Equal(names, []string{"gallery/demo/lookup", "gallery/demo/plan", "gallery/demo/settled"}) {
		t.Errorf("recorded %q", names)
	}
	if len(skipped) != 1 || !strings.HasPrefix(skipped[0], "demo/missing: reference: ") {
		t.Errorf("skipped %q", skipped)
	}
	for _, w := range ws {
		switch w.Name {
		case "gallery/demo/lookup":
			if len(w.Calls) != 4 || string(w.Expected) != `{"items":[{"id":"a","price":97,"currency":"EUR"},{"id":"b","missing":"NOT_FOUND"},{"id":"c","price":99,"currency":"EUR"}],"saved":196}` {
				t.Errorf("lookup: %d calls, result %s", len(w.Calls), w.Expected)
			}
		case "gallery/demo/plan":
			if len(w.Calls) != 2 || string(w.Expected) != `{"a":{"x":1},"b":[4,5]}` {
				t.Errorf("plan: %d calls, result %s", len(w.Calls), w.Expected)
			}
		case "gallery/demo/settled":
			if len(w.Calls) != 3 || string(w.Expected) != `["fulfilled","rejected","fulfilled"]` {
				t.Errorf("settled: %d calls, result %s", len(w.Calls), w.Expected)
			}
		}
	}
	// Round trips (start + resumes) in one mode and in batch mode, and
	// whether the calls came in the reference's order in one mode. The
	// reference runs the async callbacks that ids.map starts in reverse
	// order (c, b, a), we in call order: the departure CONTRACT.md names.
	crossings := map[string]string{
		"gallery/demo/lookup":  "5 3 false",
		"gallery/demo/plan":    "3 3 true",
		"gallery/demo/settled": "4 2 true",
	}
	for _, w := range ws {
		x := w.Checked
		if x == nil {
			t.Errorf("%s: not checked", w.Name)
			continue
		}
		if got := fmt.Sprint(x.One, x.Batch, x.OrderNote == ""); got != crossings[w.Name] {
			t.Errorf("%s: round trips one, batch, in order: %s, want %s (%s)", w.Name, got, crossings[w.Name], x.OrderNote)
		}
	}
	// The recorded programs run on the peer and through the driver like
	// the fixtures.
	p, reason := startPeer(Config{}, ws)
	if p == nil {
		t.Fatal(reason)
	}
	p.close()
}

// galleryDepartures are the reference gallery's programs whose calls come
// in another order here than on the reference (in one mode), each with
// the reason; any other difference fails TestGallery.
var galleryDepartures = map[string]string{
	// services.map(async (service) => …): the reference runs the async
	// callbacks a built-in starts in reverse order, we in call order
	// (CONTRACT.md, "Host calls in async code").
	"gallery/operations/assess-global-deployment-freeze": "call 4 of 11 is fetch_service_tier([\"checkout-api\"]), the fixture's fetch_service_tier([\"pricing-api\"])",
}

// TestGallery records the reference's gallery on the peer and runs every
// program through Sessions in process in one mode and in batch mode, hot
// and cold (every resume in a new Session): each must complete with the
// reference's result, and in one mode make the reference's calls in the
// reference's order, except the departures listed above. It needs Node,
// the peer and the gallery: MUSTARD_BENCH_GALLERY names a local copy of
// the reference's examples/programmatic-tool-calls directory.
func TestGallery(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := os.Getenv("MUSTARD_BENCH_GALLERY")
	if dir == "" {
		t.Skip("MUSTARD_BENCH_GALLERY not set (the reference's examples/programmatic-tool-calls)")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skip(err)
	}
	requirePeer(t)
	ws, skipped, err := RecordGallery(Config{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range skipped {
		t.Error("left out:", s)
	}
	if len(ws) == 0 {
		t.Fatal("no gallery programs")
	}
	for _, w := range ws {
		x := w.Checked
		t.Logf("%s: %d calls, round trips %d one, %d batch", w.Name, x.Calls, x.One, x.Batch)
		if x.One != x.Calls+1 || x.Batch < 2 || x.Batch > x.One {
			t.Errorf("%s: %d calls, round trips %d one, %d batch", w.Name, x.Calls, x.One, x.Batch)
		}
		if want := galleryDepartures[w.Name]; x.OrderNote != want {
			t.Errorf("%s: call order: %q, want %q", w.Name, x.OrderNote, want)
		}
	}
}
