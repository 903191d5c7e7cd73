package engine

import (
	"math/rand/v2"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

func init() {
	// goja's local-time Date methods read the process-wide zone; guests
	// always see UTC so that replay is identical on every machine.
	time.Local = time.UTC
}

// lockdownSource runs in every realm before guest code. It removes eval and
// replaces every route to a Function constructor with one that throws, so
// no guest text escapes validation and metering. The stub keeps
// Function.prototype as its prototype, so `f instanceof Function` works.
const lockdownSource = `(function () {
  "use strict";
  var g = globalThis, dp = Object.defineProperty, gpo = Object.getPrototypeOf;
  function lock(proto, name) {
    var stub = function () { throw new TypeError("dynamic code evaluation is not available"); };
    dp(stub, "name", { value: name, configurable: true });
    dp(stub, "prototype", { value: proto, writable: false, enumerable: false, configurable: false });
    dp(proto, "constructor", { value: stub, writable: false, enumerable: false, configurable: false });
    return stub;
  }
  dp(g, "Function", { value: lock(Function.prototype, "Function"), writable: true, enumerable: false, configurable: true });
  lock(gpo(function* () {}), "GeneratorFunction");
  lock(gpo(async function () {}), "AsyncFunction");
  delete g.eval;
  delete g.GoError;
  return [Object.getOwnPropertyDescriptor, Object.prototype, Array.prototype, Error];
})()`

var lockdownProgram = goja.MustCompile("", lockdownSource, true)

// realm is a fresh guest global environment and the intrinsics captured
// before any guest code could tamper with them.
type realm struct {
	rt        *goja.Runtime
	gopd      goja.Callable
	objProto  *goja.Object
	arrProto  *goja.Object
	errorCtor *goja.Object
}

func newRealm(seed uint64, clockMillis int64) (*realm, error) {
	rt := goja.New()
	rt.SetParserOptions(parser.WithDisableSourceMaps)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rt.SetRandSource(rng.Float64)
	now := time.UnixMilli(clockMillis).UTC()
	rt.SetTimeSource(func() time.Time { return now })
	v, err := rt.RunProgram(lockdownProgram)
	if err != nil {
		return nil, err
	}
	caps := v.(*goja.Object)
	r := &realm{rt: rt}
	r.gopd, _ = goja.AssertFunction(caps.Get("0"))
	r.objProto = caps.Get("1").(*goja.Object)
	r.arrProto = caps.Get("2").(*goja.Object)
	r.errorCtor = caps.Get("3").(*goja.Object)
	return r, nil
}

// defineFunction installs a Go function under an explicit name, so no Go
// symbol name is visible to the guest.
func (r *realm) newFunction(name string, length int, fn func(goja.FunctionCall) goja.Value) *goja.Object {
	f := r.rt.ToValue(fn).(*goja.Object)
	_ = f.DefineDataProperty("name", r.rt.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = f.DefineDataProperty("length", r.rt.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return f
}
