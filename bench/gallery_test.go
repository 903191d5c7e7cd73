package bench

import (
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
	// A capability error thrown in a plain (not async) map callback is a
	// rejection on the reference and a synchronous throw here, so the
	// results differ and the program is left out.
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
	if !slices.Equal(names, []string{"gallery/demo/lookup", "gallery/demo/plan"}) {
		t.Errorf("recorded %q", names)
	}
	if len(skipped) != 2 || !strings.HasPrefix(skipped[0], "demo/missing: reference: ") || !strings.HasPrefix(skipped[1], "demo/settled: ours: ") {
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
