package goja

import (
	"fmt"
	"hash/maphash"
	"math"
	"math/big"
	"math/bits"
	"unsafe"
)

// BigInt work and size (a mustard-sidecar addition; see PATCHES.md). A
// BigInt operation is one native step whose cost grows with its operands
// (a product of two million-bit numbers, a power whose result has a
// billion bits, a shift by 2^31), so it is charged to the Meter by operand
// size before it runs, and its result's memory is reported before it is
// allocated. Results are bounded as V8 bounds them: past 2^30 bits an
// operation throws RangeError "Maximum BigInt size exceeded". Shift counts
// past what an int holds are handled exactly instead of being truncated
// (`1n << (2n**64n + 5n)` was 32n, `5n >> 2n**64n` was 5n).

// The charges are made only with MustardMeterOperands on, so that an
// embedder can keep the readings it journaled before they existed; the
// size bound and the exact shifts hold always.

// MustardMeterOperands turns on or off (off by default) the charges of
// work that grows with an operation's operands inside one step: BigInt
// operations (here) and prototype links and proxy levels walked
// (mustard_hops.go).
func (r *Runtime) MustardMeterOperands(on bool) { r.bigMetered = on }

// maxBigIntBits is V8's largest BigInt.
const maxBigIntBits = 1 << 30

// Work units per word operation: a unit is about a quarter of a
// nanosecond of the engine's own work (a 64-bit word operation in
// math/big costs about one nanosecond).
const bigWordUnits = 4

func (r *Runtime) bigTooLarge() {
	panic(r.newError(r.getRangeError(), "Maximum BigInt size exceeded"))
}

// bigResult reports a result of about n bits about to be allocated: a
// RangeError past the largest BigInt, its memory to the Meter otherwise.
func (r *Runtime) bigResult(n uint64) {
	if n > maxBigIntBits {
		r.bigTooLarge()
	}
	if r.bigMetered {
		r.allocBytes(int(n / 8))
	}
}

// bigWork charges n word operations.
func (r *Runtime) bigWork(n float64) {
	if r.meter == nil || !r.bigMetered {
		return
	}
	units := n * bigWordUnits
	if units > math.MaxInt32 {
		units = math.MaxInt32 // refused by any budget the Meter enforces
	}
	r.work(int(units))
}

func words(x *big.Int) float64 { return float64(len(x.Bits())) + 1 }

// mulWords is the word operations of a product (math/big multiplies
// schoolbook below about 40 words, by Karatsuba above).
func mulWords(a, b float64) float64 {
	if a > b {
		a, b = b, a
	}
	if a < 40 {
		return a * b
	}
	return 2 * math.Pow(a, 0.585) * b
}

// bigLinear charges an operation linear in its operands (addition,
// bitwise operations, comparisons) and reports its result.
func (r *Runtime) bigLinear(x, y *big.Int) {
	if r.meter == nil || !r.bigMetered {
		return
	}
	n := max(x.BitLen(), y.BitLen()) + 1
	r.bigWork(float64(n)/64 + 1)
	r.allocBytes(n / 8)
}

func (r *Runtime) bigMul(x, y *big.Int) *big.Int {
	r.bigResult(uint64(x.BitLen()) + uint64(y.BitLen()))
	r.bigWork(mulWords(words(x), words(y)))
	if len(x.Bits()) <= bigMulBaseWords && len(y.Bits()) <= bigMulBaseWords {
		return new(big.Int).Mul(x, y)
	}
	ax, ay := absOf(x), absOf(y)
	if x == y {
		ay = ax // a square
	}
	z := r.mulAbs(ax, ay)
	if x.Sign()*y.Sign() < 0 {
		z.Neg(z)
	}
	return z
}

// absOf is |x|, sharing x's words.
func absOf(x *big.Int) *big.Int { return new(big.Int).SetBits(x.Bits()) }

// bigDivWork charges a division: about (quotient words) × (divisor
// words).
func (r *Runtime) bigDivWork(x, y *big.Int) {
	q := max(words(x)-words(y), 0) + 1
	r.bigWork(q * words(y))
}

// bigQuo is x / y (y != 0), truncated towards zero.
func (r *Runtime) bigQuo(x, y *big.Int) *big.Int {
	r.bigDivWork(x, y)
	q, _ := r.quoRem(x, y)
	return q
}

// bigRem is x % y (y != 0), with x's sign. Unlike the quotient (charged
// always, for the readings journaled before), the remainder is charged
// from bigChargeWords words on: shorter ones are covered by their
// instruction.
func (r *Runtime) bigRem(x, y *big.Int) *big.Int {
	if len(x.Bits()) > bigChargeWords {
		r.bigDivWork(x, y)
	}
	_, m := r.quoRem(x, y)
	return m
}

// bigChargeWords: BigInt operations charged only since the operations
// journaled before were (%, unary -, ~, ++, --, comparisons, implicit
// conversions to strings) cost nothing up to this many words, as they
// did: the instruction covers them.
const bigChargeWords = 16

// bigUnary is op(x) for an operation linear in x (-x, ~x, x + 1, x - 1):
// charged from bigChargeWords words on, offloaded when long.
func (r *Runtime) bigUnary(x *big.Int, op func(z, x *big.Int) *big.Int) *big.Int {
	n := len(x.Bits())
	if n <= bigChargeWords {
		return op(new(big.Int), x)
	}
	r.bigLinear(x, x)
	if n <= bigLinearWords {
		return op(new(big.Int), x)
	}
	var z *big.Int
	r.offload(func() { z = op(new(big.Int), x) })
	return z
}

func bigNeg(z, x *big.Int) *big.Int  { return z.Neg(x) }
func bigNot(z, x *big.Int) *big.Int  { return z.Not(x) }
func bigIncr(z, x *big.Int) *big.Int { return z.Add(x, big.NewInt(1)) }
func bigDecr(z, x *big.Int) *big.Int { return z.Sub(x, big.NewInt(1)) }

func (r *Runtime) bigExp(x, y *big.Int) *big.Int {
	// |x| of 0 or 1 gives 0, 1 or -1 whatever y is.
	if x.BitLen() <= 1 {
		r.bigWork(float64(y.BitLen())/64 + 1)
		return new(big.Int).Exp(x, y, nil)
	}
	if !y.IsUint64() || y.Uint64() > maxBigIntBits {
		r.bigTooLarge()
	}
	n := uint64(x.BitLen()) * y.Uint64() // the result's bits, within one
	if hi, _ := bits.Mul64(uint64(x.BitLen()), y.Uint64()); hi != 0 || n > maxBigIntBits+uint64(x.BitLen()) {
		r.bigTooLarge()
	}
	r.bigResult(n - min(n, uint64(x.BitLen())))
	// Squarings up to the result's size: about twice the last one.
	w := float64(n)/64 + 1
	r.bigWork(2 * mulWords(w/2, w/2))
	e := y.Uint64()
	z := r.expAbs(absOf(x), e)
	if x.Sign() < 0 && e&1 == 1 {
		z = new(big.Int).Neg(z)
	}
	return z
}

// bigShift shifts x left by s bits (right when s is negative), for any s.
func (r *Runtime) bigShift(x, s *big.Int, left bool) *big.Int {
	if s.Sign() < 0 {
		left = !left
	}
	if x.Sign() == 0 {
		return new(big.Int)
	}
	var n uint64
	if abs := new(big.Int).Abs(s); abs.IsUint64() {
		n = abs.Uint64()
	} else {
		n = math.MaxUint64
	}
	if left {
		if n > maxBigIntBits {
			r.bigTooLarge()
		}
		r.bigResult(uint64(x.BitLen()) + n)
		r.bigWork(float64(uint64(x.BitLen())+n)/64 + 1)
		if uint64(x.BitLen())+n <= uint64(bigLinearWords)*64 {
			return new(big.Int).Lsh(x, uint(n))
		}
		var z *big.Int
		r.offload(func() { z = new(big.Int).Lsh(x, uint(n)) })
		return z
	}
	if n >= uint64(x.BitLen()) {
		// Everything shifted out: 0, or -1 for a negative x (the shift
		// rounds towards negative infinity).
		if x.Sign() < 0 {
			return big.NewInt(-1)
		}
		return new(big.Int)
	}
	r.bigWork(float64(x.BitLen())/64 + 1)
	if len(x.Bits()) <= bigLinearWords {
		return new(big.Int).Rsh(x, uint(n))
	}
	var z *big.Int
	r.offload(func() { z = new(big.Int).Rsh(x, uint(n)) })
	return z
}

// bigAsN is BigInt.asIntN (signed) or asUintN of x at the given width,
// without building 2^bits when x is already in range.
func (r *Runtime) bigAsN(bitsN int, x *big.Int, signed bool) *big.Int {
	if bitsN == 0 {
		return new(big.Int)
	}
	n := uint64(bitsN)
	switch {
	case signed && uint64(x.BitLen()) < n:
		// |x| < 2^(bits-1): x is in range.
		return x
	case !signed && x.Sign() >= 0 && uint64(x.BitLen()) <= n:
		return x
	}
	if n > maxBigIntBits+1 {
		// A negative x modulo 2^bits has about bits bits.
		r.bigTooLarge()
	}
	r.bigResult(n)
	r.bigWork(float64(n)/64 + words(x))
	// x mod 2^bits: the low bits of x's two's complement, taken by words
	// (math/big's Mod divides).
	mod := r.lowBits(absOf(x), uint(n))
	if x.Sign() < 0 && mod.Sign() != 0 {
		mod = r.sub(r.shl(big.NewInt(1), uint(n)), mod)
	}
	if signed && mod.Bit(int(n-1)) == 1 {
		return r.sub(mod, r.shl(big.NewInt(1), uint(n)))
	}
	return mod
}

// bigParseWork charges parsing a numeric string of n characters as a
// BigInt: math/big parses decimal digits in time quadratic in the result's
// words (about a nanosecond per word squared).
func (r *Runtime) bigParseWork(n int) {
	w := float64(n)/19 + 1
	r.bigWork(w * w)
}

// bigTextWork charges converting x to a string in radix: linear for a
// power-of-two radix, about quadratic in words otherwise.
func (r *Runtime) bigTextWork(x *big.Int, radix int) {
	w := words(x)
	if radix&(radix-1) == 0 {
		r.bigWork(w * 16)
		return
	}
	r.bigWork(w * w / 2)
}

// toBigIntMetered is toBigInt, with a string's parse charged first and
// interruptible.
func (r *Runtime) toBigIntMetered(v Value) *valueBigInt {
	if s, ok := v.(String); ok {
		if r.meter != nil && r.bigMetered {
			r.bigParseWork(s.Length())
		}
		b, ok := r.stringToBigInt(s.toTrimmedUTF8())
		if !ok {
			panic(syntaxError(fmt.Sprintf("Cannot convert %s to a BigInt", s)))
		}
		return (*valueBigInt)(b)
	}
	return toBigInt(v)
}

// stringToBigInt is StringToBigInt of a trimmed string: false where the
// specification's answer is undefined (a SyntaxError for BigInt()).
// Without a Runtime (r nil) the parse is neither charged nor
// interruptible.
func (r *Runtime) stringToBigInt(s string) (*big.Int, bool) {
	digits, radix, neg, ok := bigIntLiteral(s)
	if !ok {
		return nil, false
	}
	b := r.bigParse(digits, radix)
	if neg {
		b.Neg(b)
	}
	return b, true
}

// bigIntLiteral splits a trimmed StringIntegerLiteral into its digits and
// radix: empty (0), decimal digits with an optional sign, or 0x, 0o, 0b and
// digits without one. Nothing else: no separators, exponent or fraction
// (upstream handed numbers past an int64 to SetString, which accepted
// underscores and made 0 of a trailing letter).
func bigIntLiteral(s string) (digits string, radix int, neg, ok bool) {
	if s == "" {
		return "0", 10, false, true
	}
	radix = 10
	if len(s) > 2 && s[0] == '0' {
		switch s[1] {
		case 'x', 'X':
			radix = 16
		case 'o', 'O':
			radix = 8
		case 'b', 'B':
			radix = 2
		}
		if radix != 10 {
			s = s[2:]
		}
	}
	if radix == 10 && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if s == "" {
		return "", 0, false, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return "", 0, false, false
		}
		if d >= radix {
			return "", 0, false, false
		}
	}
	return s, radix, neg, true
}

// bigStringChargeBits: implicit conversions of shorter BigInts to strings
// are covered by their instruction (they cost nothing before).
const bigStringChargeBits = bigChargeWords * 64

// bigIntString is a BigInt's decimal text for an implicit conversion
// (concatenation, a template literal, String(x), a property key, join,
// sort, ...): charged as toString() is, and interruptible.
func (r *Runtime) bigIntString(x *valueBigInt) String {
	b := (*big.Int)(x)
	if b.BitLen() > bigStringChargeBits && r.meter != nil && r.bigMetered {
		r.bigTextWork(b, 10)
		r.allocBytes(decimalDigits(b))
	}
	return asciiString(r.bigText(b, 10))
}

// decimalDigits is about the number of digits of x in decimal (an upper
// bound).
func decimalDigits(x *big.Int) int { return x.BitLen()*30103/100000 + 2 }

// stringOf is v.toString(), with a BigInt's conversion (v's, or its
// primitive's) charged and interruptible.
func (r *Runtime) stringOf(v Value) String {
	switch x := v.(type) {
	case *valueBigInt:
		return r.bigIntString(x)
	case *Object:
		return r.stringOf(x.toPrimitiveString())
	}
	return v.toString()
}

// propertyKey is toPropertyKey(v), with a BigInt key's conversion charged
// and interruptible (a BigInt key is otherwise converted at each use).
func (r *Runtime) propertyKey(v Value) Value {
	k := toPropertyKey(v)
	if x, ok := k.(*valueBigInt); ok {
		return r.bigIntString(x)
	}
	return k
}

// bigLinearOp is op(x, y) for an operation linear in its operands,
// offloaded when they are long.
func (r *Runtime) bigLinearOp(x, y *big.Int, op func(z, x, y *big.Int) *big.Int) *big.Int {
	r.bigLinear(x, y)
	if max(len(x.Bits()), len(y.Bits())) <= bigLinearWords {
		return op(new(big.Int), x, y)
	}
	var z *big.Int
	r.offload(func() { z = op(new(big.Int), x, y) })
	return z
}

// Compiling folds constant expressions by running them, unmetered: in
// code compiled with MustardCompileOptions.Metered a BigInt literal is not
// a constant, so `7n ** 7n ** 9n`, even in dead code, is left to run (and
// be charged) when the code runs, and no folded giant stays in a program.
func (e *compiledLiteral) mustardConstant() bool {
	if _, ok := e.val.(*valueBigInt); ok && e.c != nil && e.c.mustard.Metered {
		return false
	}
	return true
}

// hashWords hashes a BigInt's magnitude as a Map or Set key from its
// words in place: upstream hashed a copy of its bytes (big.Int.Bytes),
// which for a 100 KB key cost a 100 KB allocation every Map.get, several
// times the hashing itself. Bits is normalised (no leading zero words), so
// equal values hash alike; the words' byte order is the machine's, which
// is all that matters, since hashes never leave the process.
func hashWords(h *maphash.Hash, words []big.Word) {
	if len(words) == 0 {
		return
	}
	_, _ = h.Write(unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*bits.UintSize/8))
}

// bigToNumber is Number(x): the nearest double, ties to even, and ±Infinity
// past the largest double (upstream took the low 64 bits: Number(2n**64n)
// was 0). A BigInt of more than 1,024 bits is at least 2^1024 in
// magnitude, so it is converted without copying its digits.
func bigToNumber(x *big.Int) Value {
	if x.IsInt64() {
		return intToValue(x.Int64()) // int64 to float64 rounds to nearest even
	}
	if x.BitLen() > 1024 {
		if x.Sign() < 0 {
			return _negativeInf
		}
		return _positiveInf
	}
	f, _ := x.Float64()
	return floatToValue(f)
}

// bigCmpFloat compares x with f, which is not NaN: -1, 0 or +1. A double
// that is not an integer is under 2^52 in magnitude, so x compares with it
// as with its floor (x <= floor(f) exactly when x < f); an integral one
// converts exactly. Nothing the size of x is copied.
func bigCmpFloat(x *big.Int, f float64) int {
	switch {
	case math.IsInf(f, 1):
		return -1
	case math.IsInf(f, -1):
		return 1
	}
	fl := math.Floor(f)
	y, _ := big.NewFloat(fl).Int(nil)
	c := x.Cmp(y)
	if fl != f && c == 0 {
		return -1 // x == floor(f) < f
	}
	return c
}
