package goja

import "testing"

// Promise.any's AggregateError says what happened, as V8's does.
func TestMustardAggregateErrorMessage(t *testing.T) {
	r := New()
	_, err := r.RunString(`var out; Promise.any([Promise.reject(1), Promise.reject(2)]).catch(e => {
		out = [e instanceof AggregateError, e.message, String(e), e.errors.join(), Object.getOwnPropertyNames(e).join()].join('|') })`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Get("out").String(), "true|All promises were rejected|AggregateError: All promises were rejected|1,2|stack,message,errors"; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// toISOString writes years outside 0..9999 as a sign and six digits
// (ECMAScript's expanded years), as V8 does.
func TestMustardISOStringExpandedYears(t *testing.T) {
	r := New()
	for in, want := range map[string]string{
		"-000001-01-01T00:00:00Z": "-000001-01-01T00:00:00.000Z",
		"+275760-09-13T00:00:00Z": "+275760-09-13T00:00:00.000Z",
		"0000-01-01T00:00:00Z":    "0000-01-01T00:00:00.000Z",
		"9999-12-31T23:59:59Z":    "9999-12-31T23:59:59.000Z",
		"+010000-01-01T00:00:00Z": "+010000-01-01T00:00:00.000Z",
		"-271821-04-20T00:00:00Z": "-271821-04-20T00:00:00.000Z",
		"-009999-06-15T12:30:00Z": "-009999-06-15T12:30:00.000Z",
	} {
		v, err := r.RunString(`[new Date('` + in + `').toISOString(), new Date('` + in + `').toJSON()].join()`)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.String(); got != want+","+want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// PromiseResolve returns a value as it is only when it is a promise: an
// object with a constructor property of Promise is not one (upstream
// returned it, and await then failed inside the engine).
func TestMustardPromiseResolveIsPromise(t *testing.T) {
	r := New()
	_, err := r.RunString(`var out, gets = 0;
		const fake = { get constructor() { gets++; return Promise }, then(r) { r('thenable') } };
		(async () => {
		  const log = [await fake, Promise.resolve(fake) === fake, await Promise.resolve(fake), gets];
		  out = log.join('|');
		})();`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Get("out").String(), "thenable|false|thenable|0"; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestBoundFunctionText(t *testing.T) {
	v, err := New().RunString(`function declared(a) {} [String(declared.bind(null)), declared.bind(null).name, String(Math.max.bind(null))].join('|')`)
	if err != nil || v.String() != "function () { [native code] }|bound declared|function () { [native code] }" {
		t.Fatal(v, err)
	}
}

// JSON.parse gives numbers past float64's range as V8 does (Node 20's
// answers), where upstream failed with the Go decoder's error.
func TestJSONParseNumbersPastFloatRange(t *testing.T) {
	r := New()
	v, err := r.RunString(`JSON.stringify([
		JSON.parse('1'.repeat(400)), JSON.parse('-' + '1'.repeat(400)),
		JSON.parse('[1e-400, -1e400, -0, 0.1, 1e21, 5e-324, 2e-324, 123456789012345678901234567890, -1.5E+3, 1e400]'),
		Object.is(JSON.parse('-0'), -0), Object.is(JSON.parse('-1e-400'), -0), 1 / JSON.parse('-1e-400')])`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), `[null,null,[0,null,0,0.1,1e+21,5e-324,0,1.2345678901234568e+29,-1500,null],true,true,null]`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	v, err = r.RunString(`String(JSON.parse('1' + '0'.repeat(400))) + ',' + JSON.parse('-1e999')`)
	if err != nil || v.String() != "Infinity,-Infinity" {
		t.Fatal(v, err)
	}
}

func TestMustardToPrimitiveMessageAndToLocaleString(t *testing.T) {
	vm := New()
	for src, want := range map[string]string{
		`try { String(Object.create(null)) } catch (e) { e.message }`:        "Cannot convert object to primitive value",
		`try { +Object.create(null) } catch (e) { e.message }`:               "Cannot convert object to primitive value",
		`try { ` + "`${Object.create(null)}`" + ` } catch (e) { e.message }`: "Cannot convert object to primitive value",
		`(1234.5).toLocaleString("en-US")`:                                   "1234.5",
		`(255).toLocaleString(16)`:                                           "255",
	} {
		v, err := vm.RunString(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if v.String() != want {
			t.Errorf("%s = %q, want %q", src, v.String(), want)
		}
	}
}

// An integer product of zero and a negative number is -0, as in
// JavaScript (upstream gave -0 only for a factor of -1).
func TestMustardIntegerProductNegativeZero(t *testing.T) {
	r := New()
	v, err := r.RunString(`const n = [1, 2, 3].length; [Object.is(-n * 0, -0), Object.is(0 * -n, -0), Object.is(-3 * false, -0), Object.is(-1 * 0, -0), Object.is(3 * 0, 0), Object.is(-n * -0, 0)].join()`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "true,true,true,true,true,true"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// RegExp's Symbol methods on an object without exec throw a catchable
// TypeError, as V8 does, where they used to dereference a nil method.
func TestMustardRegExpExecWithoutMethod(t *testing.T) {
	r := New()
	v, err := r.RunString(`[
		() => RegExp.prototype[Symbol.replace].call({}, "a", "b"),
		() => RegExp.prototype[Symbol.match].call({}, "a"),
		() => RegExp.prototype.test.call({}, "a"),
		() => RegExp.prototype[Symbol.search].call({}, "a"),
	].map(f => { try { f(); return "no error" } catch (e) { return e instanceof TypeError } }).join()`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "true,true,true,true"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	// A RegExp whose exec is gone still matches with the built-in one.
	v, err = r.RunString(`const re = /b/; Object.defineProperty(re, "exec", {value: undefined}); "abc".replace(re, "X")`)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.String(); got != "aXc" {
		t.Fatalf("got %s, want aXc", got)
	}
}
