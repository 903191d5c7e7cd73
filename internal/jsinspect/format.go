// Package jsinspect formats guest values as Node 20's console.log does:
// util.format(...args) with util.inspect's default options (depth 2, no
// colors, maxArrayLength 100, maxStringLength 10000, breakLength 80,
// compact 3, not sorted, getters not called, proxies shown as their
// target).
//
// It follows lib/internal/util/inspect.js line by line where it can. Guest
// code runs only where Node's rules convert a value (%s on an object with
// its own toString, %d, %i, %f, %j); everything else is read from internal
// slots and property descriptors, so no getter, proxy trap or custom
// inspect function ever runs. See doc.go for what differs from Node.
package jsinspect

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja"
)

// Options bounds a formatting.
type Options struct {
	// MaxBytes stops the formatting once the text passes this many UTF-8
	// bytes; Result.Truncated is then set. 0 means no cap.
	MaxBytes int
	// MaxWork stops the formatting once Work passes this many units, as
	// MaxBytes does. 0 means no cap.
	MaxWork int
	// Stack, if set, rewrites an error's stack text (goja's, with its
	// "\tat f (file:1:2(3))" frames) before Node's rules lay it out: an
	// embedder shows frames in its own terms, and leaves out its own.
	Stack func(stack string) string
}

// Result is a formatted line.
type Result struct {
	Text string
	// Truncated: a cap was reached; Text is a prefix of the line (at most
	// MaxBytes bytes), which the caller drops.
	Truncated bool
	// Work is the values and properties visited plus the bytes produced,
	// for the caller's meter.
	Work int
}

// errFormat is what a failure of the formatter itself (never expected)
// becomes: it names no Go type and no path.
var errFormat = errors.New("console: value cannot be formatted")

// stop unwinds a formatting that reached a cap.
type stop struct{}

// Format formats args as Node's util.format does. The error is a guest
// exception (*goja.Exception) or an interrupt (*goja.InterruptedError)
// raised while a conversion Node's rules call ran guest code, returned as
// is for the caller to rethrow.
func Format(rt *goja.Runtime, args []goja.Value, o Options) (res Result, err error) {
	in := &inspector{
		rt:        rt,
		maxBytes:  o.MaxBytes,
		maxWork:   o.MaxWork,
		stack:     o.Stack,
		objProto:  rt.MustardIntrinsic("Object.prototype"),
		funcProto: rt.MustardIntrinsic("Function.prototype"),
		errProto:  rt.MustardIntrinsic("Error.prototype"),
	}
	defer func() {
		if x := recover(); x != nil {
			switch x := x.(type) {
			case stop:
				res = Result{Text: in.prefix(), Truncated: true, Work: in.work + len(in.out.String())}
				err = nil
			case *goja.InterruptedError:
				res, err = Result{Work: in.work}, x
			case error:
				var ie *goja.InterruptedError
				if errors.As(x, &ie) {
					res, err = Result{Work: in.work}, ie
				} else {
					res, err = Result{Work: in.work}, errFormat
				}
			case *goja.Exception:
				res, err = Result{Work: in.work}, x
			default:
				res, err = Result{Work: in.work}, errFormat
			}
		}
	}()
	if err := in.format(args); err != nil {
		return Result{Work: in.work}, err
	}
	text := in.out.String()
	res = Result{Text: text, Work: in.work + len(text)}
	if in.maxBytes > 0 && len(text) > in.maxBytes {
		res.Text, res.Truncated = in.prefix(), true
	}
	return res, nil
}

// inspector is one Format call.
type inspector struct {
	rt                            *goja.Runtime
	objProto, funcProto, errProto *goja.Object
	maxBytes, maxWork             int
	stack                         func(string) string
	emitted                       int // bytes of leaves produced: a lower bound of the text's size
	work                          int
	out                           strings.Builder
}

// prefix is the text produced so far, cut to MaxBytes on a character
// boundary.
func (in *inspector) prefix() string {
	s := in.out.String()
	if in.maxBytes > 0 && len(s) > in.maxBytes {
		cut := in.maxBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// step counts one visited value or property.
func (in *inspector) step() {
	in.work++
	if in.maxWork > 0 && in.work > in.maxWork {
		panic(stop{})
	}
	if in.work&1023 == 0 {
		if err := in.rt.MustardPoll(); err != nil {
			panic(err)
		}
	}
}

// emit counts n bytes of a leaf the text will contain.
func (in *inspector) emit(n int) {
	in.emitted += n
	if in.maxBytes > 0 && in.emitted+in.out.Len() > in.maxBytes {
		in.work += in.maxBytes - min(in.maxBytes, in.out.Len())
		panic(stop{})
	}
	in.work += n
	if in.maxWork > 0 && in.work > in.maxWork {
		panic(stop{})
	}
}

// write appends a finished piece of the line.
func (in *inspector) write(s string) {
	if in.maxBytes > 0 && in.out.Len()+len(s) > in.maxBytes {
		// one byte past the cap is enough to say the line crossed it
		in.out.WriteString(s[:in.maxBytes-in.out.Len()+1])
		panic(stop{})
	}
	in.out.WriteString(s)
	in.emitted = 0
}

// guest runs a conversion that may run guest code.
func (in *inspector) guest(f func()) error {
	return in.rt.MustardTry(f)
}

// format is formatWithOptionsInternal.
func (in *inspector) format(args []goja.Value) error {
	a := 0
	join := ""
	if len(args) > 0 {
		if first, ok := args[0].(goja.String); ok && isPrimitiveString(args[0]) {
			fs := unitsOf(first)
			if len(args) == 1 {
				in.write(utf16ToString(fs))
				return nil
			}
			var str strings.Builder
			lastPos := 0
			flush := func(end int) {
				str.WriteString(utf16ToString(fs[lastPos:end]))
			}
			for i := 0; i < len(fs)-1; i++ {
				if fs[i] != '%' {
					continue
				}
				i++
				next := fs[i]
				if a+1 != len(args) {
					var temp string
					switch next {
					case 's':
						a++
						s, err := in.percentS(args[a])
						if err != nil {
							return err
						}
						temp = s
					case 'j':
						a++
						s, err := in.percentJ(args[a])
						if err != nil {
							return err
						}
						temp = s
					case 'd':
						a++
						s, err := in.percentNum(args[a], 'd')
						if err != nil {
							return err
						}
						temp = s
					case 'O':
						a++
						temp = in.inspect(args[a], newCtx(in, 2, false, false))
					case 'o':
						a++
						temp = in.inspect(args[a], newCtx(in, 4, true, true))
					case 'i':
						a++
						s, err := in.percentNum(args[a], 'i')
						if err != nil {
							return err
						}
						temp = s
					case 'f':
						a++
						s, err := in.percentNum(args[a], 'f')
						if err != nil {
							return err
						}
						temp = s
					case 'c':
						a++
						temp = ""
					case '%':
						flush(i)
						lastPos = i + 1
						continue
					default:
						continue
					}
					if lastPos != i-1 {
						flush(i - 1)
					}
					str.WriteString(temp)
					in.emit(len(temp))
					lastPos = i + 1
				} else if next == '%' {
					flush(i)
					lastPos = i + 1
				}
			}
			if lastPos != 0 {
				a++
				join = " "
				if lastPos < len(fs) {
					flush(len(fs))
				}
			}
			in.write(str.String())
		}
	}
	for ; a < len(args); a++ {
		in.write(join)
		v := args[a]
		if s, ok := v.(goja.String); ok && isPrimitiveString(v) {
			in.write(utf16ToString(unitsOf(s)))
		} else {
			in.write(in.inspect(v, newCtx(in, 2, false, false)))
		}
		join = " "
	}
	return nil
}

func isPrimitiveString(v goja.Value) bool {
	_, isObj := v.(*goja.Object)
	return !isObj && goja.IsString(v)
}

// percentS is %s.
func (in *inspector) percentS(v goja.Value) (string, error) {
	switch {
	case goja.IsNumber(v):
		return formatNumber(v.ToFloat()), nil
	case goja.IsBigInt(v):
		return v.String() + "n", nil
	}
	if sym, ok := v.(*goja.Symbol); ok {
		return symbolString(sym), nil
	}
	o, ok := v.(*goja.Object)
	if !ok {
		return primString(v), nil
	}
	if isFunction(o) || !in.hasBuiltInToString(o) {
		var s string
		err := in.guest(func() { s = jsString(v.ToString()) })
		return s, err
	}
	c := newCtx(in, 0, false, false)
	return in.inspect(v, c), nil
}

// percentJ is %j: JSON.stringify, a circular structure shown as
// '[Circular]'.
func (in *inspector) percentJ(v goja.Value) (string, error) {
	var r goja.Value
	err := in.guest(func() { r = in.rt.MustardJSONStringify(v) })
	if err != nil {
		if ex, ok := err.(*goja.Exception); ok {
			if eo, ok := ex.Value().(*goja.Object); ok {
				if p := eo.MustardOwnProp(in.rt.ToValue("message")); p.Value != nil &&
					strings.HasPrefix(p.Value.String(), "Converting circular structure to JSON") &&
					in.errorName(eo) == "TypeError" {
					return "[Circular]", nil
				}
			}
		}
		return "", err
	}
	if r == nil || goja.IsUndefined(r) {
		return "undefined", nil
	}
	return utf16ToString(unitsOf(r.(goja.String))), nil
}

// errorName reads name along eo's prototype chain, data properties only.
func (in *inspector) errorName(eo *goja.Object) string {
	v, ok := in.dataGet(eo, in.rt.ToValue("name"))
	if !ok || v == nil {
		return ""
	}
	return v.String()
}

// percentNum is %d, %i and %f.
func (in *inspector) percentNum(v goja.Value, verb byte) (string, error) {
	if goja.IsBigInt(v) && verb != 'f' {
		return v.String() + "n", nil
	}
	if _, ok := v.(*goja.Symbol); ok {
		return "NaN", nil
	}
	var f float64
	err := in.guest(func() {
		switch verb {
		case 'd':
			f = v.ToNumber().ToFloat()
		case 'i':
			f = in.rt.MustardParseInt(v).ToFloat()
		default:
			f = in.rt.MustardParseFloat(v).ToFloat()
		}
	})
	if err != nil {
		return "", err
	}
	return formatNumber(f), nil
}

// formatNumber is Number.prototype.toString with -0 shown as -0.
func formatNumber(f float64) string {
	if f == 0 && math.Signbit(f) {
		return "-0"
	}
	return numberString(f)
}

func numberString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	// ECMAScript Number::toString: the shortest digits, in fixed notation
	// for exponents -7 < n <= 21, else exponential.
	s := strconv.FormatFloat(math.Abs(f), 'e', -1, 64)
	mant, expStr, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(expStr)
	n := e + 1 // decimal point position
	k := len(digits)
	var b strings.Builder
	if f < 0 {
		b.WriteByte('-')
	}
	switch {
	case k <= n && n <= 21:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", n-k))
	case 0 < n && n <= 21:
		b.WriteString(digits[:n])
		b.WriteByte('.')
		b.WriteString(digits[n:])
	case -6 < n && n <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -n))
		b.WriteString(digits)
	default:
		b.WriteByte(digits[0])
		if k > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if n-1 >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(n - 1))
	}
	return b.String()
}

// hasBuiltInToString: %s shows an object with inspect unless it (or a
// prototype below the built-in one) has its own toString or
// Symbol.toPrimitive. Properties are read as data: an accessor counts as
// no function.
func (in *inspector) hasBuiltInToString(value *goja.Object) bool {
	if t, _, p := value.MustardProxy(); p {
		if t == nil {
			return true
		}
		value = t
		for {
			t, _, p := value.MustardProxy()
			if !p {
				break
			}
			if t == nil {
				return true
			}
			value = t
		}
	}
	toStr := in.rt.ToValue("toString")
	toPrim := goja.SymToPrimitive
	isFn := func(v goja.Value, ok bool) bool {
		o, isObj := v.(*goja.Object)
		return ok && isObj && isFunction(o)
	}
	hasOwn := func(o *goja.Object, k goja.Value) bool { return o.MustardOwnProp(k).Present }
	checkToString, checkToPrim := true, true
	if !isFn(in.dataGet(value, toStr)) {
		if !isFn(in.dataGet(value, toPrim)) {
			return true
		} else if hasOwn(value, toPrim) {
			return false
		}
		checkToString = false
	} else if hasOwn(value, toStr) {
		return false
	} else if !isFn(in.dataGet(value, toPrim)) {
		checkToPrim = false
	} else if hasOwn(value, toPrim) {
		return false
	}
	pointer := value
	for i := 0; ; i++ {
		pointer = proto(pointer)
		if pointer == nil || i > 10000 {
			return true
		}
		if (checkToString && hasOwn(pointer, toStr)) || (checkToPrim && hasOwn(pointer, toPrim)) {
			break
		}
	}
	d := pointer.MustardOwnProp(in.rt.ToValue("constructor"))
	f, ok := d.Value.(*goja.Object)
	return ok && isFunction(f) && builtInObjects[in.funcName(f)]
}
