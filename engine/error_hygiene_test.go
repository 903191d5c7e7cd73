package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Error text reaches hosts and guests. None of it may carry a host path, a
// Go stack trace or a Go type name.

var (
	hostPath    = regexp.MustCompile(`(^|[^A-Za-z0-9_.])/[A-Za-z0-9._-]+/[A-Za-z0-9._/-]*`)
	goFile      = regexp.MustCompile(`\.go\b`)
	goAddress   = regexp.MustCompile(`\b0x[0-9a-f]{6,}\b`)
	goTypeNames = []string{
		"goroutine", "github.com/", "*goja.", "goja.", "main.", "runtime.", "reflect.", "interface {", "interface{}",
		"[]interface", "map[string]", "func(", "*engine.", "engine.", "value.Value", "snapshot.", "policy.",
		"[]uint8", "[]uint16", "*big.Int", "struct {", "unsafe.", "sync.", "errors.", "panic:", "[recovered]",
		"nil pointer", "index out of range", "slice bounds", "<nil>", "%!",
	}
)

// uncleanReason says why msg is not fit for a host or a guest, or "".
func uncleanReason(msg string) string {
	if m := hostPath.FindString(msg); m != "" {
		return "host path " + m
	}
	if goFile.MatchString(msg) {
		return "Go file name"
	}
	if goAddress.MatchString(msg) {
		return "memory address"
	}
	for _, s := range goTypeNames {
		if strings.Contains(msg, s) {
			return "Go internals " + s
		}
	}
	for _, dir := range hostDirs() {
		if dir != "" && strings.Contains(msg, dir) {
			return "host directory " + dir
		}
	}
	return ""
}

func hostDirs() []string {
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	return []string{wd, filepath.Dir(wd), runtime.GOROOT(), home, os.TempDir()}
}

// guestVisibleErrors makes the guest collect the text of errors it can
// catch: boundary TypeErrors, the lockdown's TypeErrors, errors thrown by
// guarded and plain built-ins, host errors. Each element of the result is
// String(e) and e.stack.
const guestVisibleErrors = `
const out = [];
const attempt = (f) => { try { f() } catch (e) { out.push(String(e), String(e && e.stack)) } };
attempt(() => cap(() => 1));
attempt(() => cap(Symbol()));
attempt(() => cap(1n));
attempt(() => cap(new Map()));
attempt(() => cap(new Proxy({}, {})));
attempt(() => { const a = []; a.push(a); cap(a) });
attempt(() => { const s = {}; cap([s, s]) });
attempt(() => cap({ get x() { return 1 } }));
attempt(() => { let v = 1; for (let i = 0; i < 129; i++) v = [v]; cap(v) });
attempt(() => cap(Object.assign([1], {x: 1})));
attempt(() => Function('return 1'));
attempt(() => (async () => {}).constructor('1'));
attempt(() => (0, eval)('1'));
attempt(() => 'x'.repeat(-1));
attempt(() => JSON.parse('{'));
attempt(() => JSON.stringify(10n));
attempt(() => { const a = []; a.push(a); JSON.stringify(a) });
attempt(() => [].join.call(null));
attempt(() => new Uint8Array(-1));
attempt(() => Promise.prototype.then.call(1));
attempt(() => [3, 1].sort(1));
attempt(() => 'a'.replace(/a/, () => { throw new Error('r') }));
attempt(() => null.x);
attempt(() => undefined());
attempt(() => new cap());
attempt(() => Reflect.construct(cap, []));
attempt(() => Object.defineProperty(globalThis, '__mustard_m', { value: 1 }));
attempt(() => new Array(-1));
attempt(() => Symbol() + '');
attempt(() => new RegExp('('));
attempt(() => BigInt(1.5));
attempt(() => cap());
out
`

func TestErrorTextIsClean(t *testing.T) {
	var messages []string
	for _, c := range allGuestCases() {
		if c.isolated || c.heavy && raceEnabled {
			continue
		}
		r := cachedRun(c)
		if r.err != nil {
			messages = append(messages, r.err.Error())
		}
	}
	require.Greater(t, len(messages), 100)

	// Failures outside the case tables: parse errors, limits, bad inputs.
	for _, src := range []string{"let x = ;", "(", "}", "`", "/(/", "a => => 1", "\xff", strings.Repeat("[", 2000),
		"for (const x of []) if (x) 1;", "function f() { return f() } f()", "while (true) {}", "'x'.repeat(2 ** 30)",
		"let s = 'x'; for (;;) s += s;", "const a = []; for (;;) a.push({})"} {
		r := runGuest(guestCase{src: src, limits: smallBudget()})
		if r.err != nil {
			messages = append(messages, r.err.Error())
		}
		if r.problem != "" {
			messages = append(messages, r.problem)
		}
	}

	// Errors the guest can see.
	r := runGuest(guestCase{src: guestVisibleErrors, caps: []string{"cap"}, script: []any{hostErr("HostError", "from the host")}})
	require.NoError(t, r.err)
	for _, e := range r.step.Value.Elems {
		messages = append(messages, e.Str)
	}

	for _, msg := range messages {
		if why := uncleanReason(msg); why != "" {
			assert.Fail(t, "error text is not clean", "%s in %q", why, msg)
		}
	}
}

func TestUncleanReasonCatchesLeaks(t *testing.T) {
	for _, msg := range []string{
		"Runtime: internal error at /work/main/engine/exec.go:12",
		"goroutine 7 [running]",
		"cannot convert *goja.Object",
		"value of type []interface {}",
		"github.com/mustard-sidecar/mustard-sidecar/internal/goja.(*vm).run",
		"main.main()",
		"reflect.Value.Call",
	} {
		assert.NotEmpty(t, uncleanReason(msg), msg)
	}
	for _, msg := range []string{
		"Runtime: TypeError: bad\n  at f (2:9)\n  at <script> (4:2)",
		"Runtime: result functions cannot cross the structured host boundary",
		"Limit: execution cancelled",
		"Parse: Unexpected token ; (1:9)",
	} {
		assert.Empty(t, uncleanReason(msg), msg)
	}
}
