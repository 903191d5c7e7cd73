package goja

import (
	"math/big"
	"math/bits"
)

// Prototype links and proxy levels (a mustard-sidecar addition; see
// PATCHES.md). A property read on an object at the end of a 30,000-link
// prototype chain, `in` on it, instanceof against it, or an operation
// through 10,000 nested proxies is one instruction that walks them all. With
// MustardMeterOperands on, each link or proxy level walked is charged
// hopUnits of work, reported once every workEvery links so that the common
// single hop costs an increment.

// hopUnits is a quarter of an instruction: a link costs the engine about a
// map lookup and a call.
const hopUnits = 16

// protoHop counts one prototype link or proxy level walked.
func (r *Runtime) protoHop() {
	r.hops++
	if r.hops&(workEvery-1) == 0 && r.bigMetered && r.meter != nil {
		r.work(workEvery * hopUnits)
	}
}

func (o *baseObject) hop() { o.val.runtime.protoHop() }

// Long strings compared or hashed (with MustardMeterOperands on): `===`,
// `<` and the other comparisons of two strings, and a string key of a Map
// or Set, cost as much as copying them (a unit per copyBytesPerUnit bytes)
// once they are long: a comparison of two distinct 3 MB strings was one
// instruction. Equality of strings of different lengths costs nothing.

// compareChargeMin: shorter strings are compared within their instruction.
const compareChargeMin = 256

// The comparison operators call it only with MustardMeterOperands on; it
// looks at the operands' concrete types first, which is cheaper than an
// assertion to String for the numbers most comparisons are of.
func (r *Runtime) chargeCompare(x, y Value) {
	if r.meter == nil {
		return
	}
	if !isStringValue(x) || !isStringValue(y) {
		r.chargeBigCompare(x, y)
		return
	}
	xs, ys := x.(String), y.(String)
	if n := min(xs.Length(), ys.Length()); n >= compareChargeMin {
		r.work(min(stringBytes(xs), stringBytes(ys)) / copyBytesPerUnit)
	}
}

// chargeBigCompare charges comparing two long BigInts as comparing their
// bytes costs (a unit per copyBytesPerUnit).
func (r *Runtime) chargeBigCompare(x, y Value) {
	if bx, ok := x.(*valueBigInt); ok {
		if by, ok := y.(*valueBigInt); ok {
			if n := min(len((*big.Int)(bx).Bits()), len((*big.Int)(by).Bits())); n > bigChargeWords {
				r.work(n * bits.UintSize / 8 / copyBytesPerUnit)
			}
		}
	}
}

// chargeSame charges a built-in's equality test of x and y (SameValue,
// SameValueZero, IsStrictlyEqual: includes, indexOf, Object.is, the
// invariant checks of defineProperty and of proxies) as chargeCompare
// charges the operators': comparing two distinct 3 MB strings was one
// instruction.
func (r *Runtime) chargeSame(x, y Value) {
	if r.bigMetered && isStringValue(x) {
		r.chargeCompare(x, y)
	}
}

// longSearch reports whether a search for v through many values charges
// each comparison (chargeSame), so that a search for a number or a short
// string costs nothing more a value.
func (r *Runtime) longSearch(v Value) bool {
	if !r.bigMetered || r.meter == nil {
		return false
	}
	s, ok := v.(String)
	return ok && s.Length() >= compareChargeMin
}

// numberChargeMin: converting a shorter string to a number is covered by
// its instruction (it cost nothing before).
const numberChargeMin = compareChargeMin

// chargeNumber charges converting v to a number when it is a long string
// (`+s`, `s * 1`, `s | 0`, ...: the conversion reads every character, a
// unit each; the string is converted at about 2 ns a character).
func (r *Runtime) chargeNumber(v Value) {
	if r.bigMetered && r.meter != nil && isStringValue(v) {
		if n := v.(String).Length(); n >= numberChargeMin {
			r.work(n)
		}
	}
}

// toNumeric is toNumeric(v), a long string's conversion charged.
func (r *Runtime) toNumeric(v Value) Value {
	if i, ok := v.(valueInt); ok { // the common case, first and cheapest
		return i
	}
	if r.bigMetered {
		r.chargeNumber(v)
	}
	return toNumeric(v)
}

// chargeLooseCompare is chargeCompare for the comparisons that convert
// (==, !=, <, <=, >, >=) of the two operands on the stack: a string
// compared with a BigInt is parsed here, charged as BigInt(string) is and
// interruptible, and replaces the string when it is a BigInt's text
// (comparing with it is what the comparison does; otherwise the
// comparison finds it is not, in a scan).
func (r *Runtime) chargeLooseCompare(operands []Value) {
	x, y := operands[0], operands[1]
	if isNumberValue(x) && isNumberValue(y) { // the common case: nothing to charge
		return
	}
	r.chargeCompare(x, y)
	if isNumberValue(x) {
		r.chargeNumber(y) // compared as a number
	} else if isNumberValue(y) {
		r.chargeNumber(x)
	}
	if _, ok := x.(*valueBigInt); ok {
		if s, ok := y.(String); ok && s.Length() > bigStringChargeBits/3 {
			operands[1] = r.looseBigOperand(s)
		}
	} else if _, ok := y.(*valueBigInt); ok {
		if s, ok := x.(String); ok && s.Length() > bigStringChargeBits/3 {
			operands[0] = r.looseBigOperand(s)
		}
	}
}

func (r *Runtime) looseBigOperand(s String) Value {
	if r.meter != nil {
		r.bigParseWork(s.Length())
	}
	if b, ok := r.stringToBigInt(s.toTrimmedUTF8()); ok {
		return (*valueBigInt)(b)
	}
	return s
}

func isNumberValue(v Value) bool {
	switch v.(type) {
	case valueInt, valueFloat:
		return true
	}
	return false
}

func isStringValue(v Value) bool {
	switch v.(type) {
	case asciiString, unicodeString, *importedString:
		return true
	}
	return false
}

// chargeKey charges hashing a long Map or Set key (a string or a BigInt)
// and comparing it with the entry it finds.
func (r *Runtime) chargeKey(key Value) {
	if !r.bigMetered || r.meter == nil {
		return
	}
	if s, ok := key.(String); ok && s.Length() >= compareChargeMin {
		r.work(2 * stringBytes(s) / copyBytesPerUnit)
	} else if b, ok := key.(*valueBigInt); ok && len((*big.Int)(b).Bits()) > bigChargeWords {
		// Hashed from a copy of its bytes.
		r.work(2 * len((*big.Int)(b).Bits()) * bits.UintSize / 8 / copyBytesPerUnit)
	}
}

// sourceText is a function's text for Function.prototype.toString: with
// MustardMeterOperands on, a text of compareChargeMin characters or more
// reports its memory and a unit per 4 bytes (it is made by scanning and
// copying the function's source: 0.7 ns a byte of ASCII, 4 ns a unit of
// non-ASCII text). The text is made first: at most the program's source,
// or a name the program made.
func (r *Runtime) sourceText(s String) String {
	if r.bigMetered && r.meter != nil && s.Length() >= compareChargeMin {
		r.allocBytes(stringBytes(s))
		r.work(stringBytes(s) / 4)
	}
	return s
}

// chargeFrames charges an Error's stack capture (with MustardMeterOperands
// on): a quarter of an instruction a frame, so that errors made at call
// depth 240 cost what their capture does. The Meter is told without an
// interrupt check, since errors are also made where no guest code runs;
// an interrupt it raises takes effect at the next instruction.
func (r *Runtime) chargeFrames(n int) {
	if r.bigMetered && r.meter != nil && n > 0 {
		r.meter.Work(n * hopUnits)
	}
}

// numArg is v, a built-in's argument about to be converted to a number,
// with the conversion charged when it is a long string (Math.abs(s),
// s.slice(t), ...: parsing reads every character, and a failed parse
// copies the text into its error).
func (r *Runtime) numArg(v Value) Value {
	r.chargeNumber(v)
	return v
}

// numArgs charges, as numArg, the first arity arguments of a call that
// converts them all to numbers (the Date setters): an argument past the
// setter's own is never read, so it costs nothing.
func (r *Runtime) numArgs(call FunctionCall, arity int) {
	args := call.Arguments
	if len(args) > arity {
		args = args[:arity]
	}
	for _, a := range args {
		r.chargeNumber(a)
	}
}
