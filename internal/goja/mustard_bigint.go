package goja

import (
	"math"
	"math/big"
	"math/bits"
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
	return new(big.Int).Mul(x, y)
}

// bigQuo and bigRem charge a division: about (quotient words) × (divisor
// words).
func (r *Runtime) bigDivWork(x, y *big.Int) {
	q := max(words(x)-words(y), 0) + 1
	r.bigWork(q * words(y))
}

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
	return new(big.Int).Exp(x, y, nil)
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
		return new(big.Int).Lsh(x, uint(n))
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
	return new(big.Int).Rsh(x, uint(n))
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
	twoToBits := new(big.Int).Lsh(big.NewInt(1), uint(n))
	mod := new(big.Int).Mod(x, twoToBits)
	if signed && mod.Cmp(new(big.Int).Lsh(big.NewInt(1), uint(n-1))) >= 0 {
		return mod.Sub(mod, twoToBits)
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

// toBigIntMetered is toBigInt, with a string's parse charged first.
func (r *Runtime) toBigIntMetered(v Value) *valueBigInt {
	if s, ok := v.(String); ok && r.meter != nil && r.bigMetered {
		r.bigParseWork(s.Length())
	}
	return toBigInt(v)
}

// bigLinearOp is op(x, y) for an operation linear in its operands.
func (r *Runtime) bigLinearOp(x, y *big.Int, op func(z, x, y *big.Int) *big.Int) *big.Int {
	r.bigLinear(x, y)
	return op(new(big.Int), x, y)
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
