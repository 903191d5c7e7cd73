package goja

import (
	"strings"
	"testing"
)

func TestMustardInAsync(t *testing.T) {
	r := New()
	var seen []string
	_ = r.Set("probe", func(call FunctionCall) Value {
		where := call.Argument(0).String()
		if r.MustardInAsync() {
			where += ":async"
		} else {
			where += ":sync"
		}
		seen = append(seen, where)
		return _undefined
	})
	_, err := r.RunString(`
		function plain(w) { probe(w) }
		probe('top');
		plain('helper');
		async function f() { probe('async-body'); plain('async-helper'); [1].map(() => probe('async-map')); await null; probe('after-await') }
		f();
		new Promise(() => probe('executor'));
		Promise.resolve().then(() => probe('then'));
		function* g() { probe('generator') }
		g().next();
		probe('top-end');
	`)
	if err != nil {
		t.Fatal(err)
	}
	want := "top:sync helper:sync async-body:async async-helper:async async-map:async executor:async generator:sync top-end:sync after-await:async then:async"
	if got := strings.Join(seen, " "); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if r.MustardInAsync() {
		t.Fatal("still async after the script")
	}
}

func TestMustardSettleRunsReactionsInOrderAsOneBatch(t *testing.T) {
	r := New()
	p1, _ := r.MustardNewPromise()
	p2, _ := r.MustardNewPromise()
	_ = r.Set("p1", p1.toValue(r))
	_ = r.Set("p2", p2.toValue(r))
	_, err := r.RunString(`
		var log = [];
		p2.then(v => log.push('p2 ' + v));
		p1.then(v => { log.push('p1 ' + v); return null }).then(() => log.push('p1 next'));
		p2.catch(() => {});
	`)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.MustardSettle(p1, r.ToValue(1), false); err != nil {
		t.Fatal(err)
	}
	if err := r.MustardSettle(p2, r.ToValue(2), false); err != nil {
		t.Fatal(err)
	}
	if got := r.Get("log").String(); got != "" {
		t.Fatalf("reactions ran before MustardRunJobs: %q", got)
	}
	if err := r.MustardRunJobs(); err != nil {
		t.Fatal(err)
	}
	// p1's reaction was queued first; its next link runs after p2's.
	if got := r.Get("log").String(); got != "p1 1,p2 2,p1 next" {
		t.Fatalf("log = %q", got)
	}
}

func TestMustardSettleFollowsThenables(t *testing.T) {
	r := New()
	p, pv := r.MustardNewPromise()
	_ = r.Set("p", pv)
	v, err := r.RunString(`var out; p.then(v => { out = v }); ({ then(res) { res(42) } })`)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.MustardSettle(p, v, false); err != nil {
		t.Fatal(err)
	}
	if err := r.MustardRunJobs(); err != nil {
		t.Fatal(err)
	}
	if got := r.Get("out").ToInteger(); got != 42 {
		t.Fatalf("out = %d", got)
	}
	q, _ := r.MustardNewPromise()
	if err := r.MustardSettle(q, r.ToValue("no"), true); err != nil {
		t.Fatal(err)
	}
	if q.State() != PromiseStateRejected {
		t.Fatal("not rejected")
	}
}
