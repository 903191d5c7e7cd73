package goja

import (
	"math/big"
	"math/bits"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/parser"
)

// Interruptible BigInt arithmetic (a mustard-sidecar addition; see
// PATCHES.md). A math/big operation is one call that no interrupt reaches:
// a product of two 2^29-bit numbers takes about a second, parsing two
// million decimal digits five (math/big parses in quadratic time), 3n **
// 10n**8n twelve. Large operations are built here from math/big calls on
// pieces small enough to take about a millisecond each, with an interrupt
// check between them, so Interrupt (a cancel, a wall-time limit) ends them
// within milliseconds whatever the budgets:
//
//   - products: Karatsuba's recursion on the larger operand's halves down
//     to pieces of bigMulBaseWords words, an unbalanced product as a sum of
//     balanced ones, partial results added in place by word loops that
//     check for an interrupt as they go;
//   - powers: square and multiply with those products;
//   - division: the recursive division of Burnikel and Ziegler (in the
//     formulation of CPython's _pylong.int_divmod) on digits of the
//     divisor's size, or on short digits for a small divisor, down to math/big
//     divisions of at most bigDivBaseBits-bit divisors;
//   - decimal (any radix but a power of two) printing and parsing: divide
//     and conquer on the powers radix^(d·2^i), with those divisions and
//     products; power-of-two radixes by word loops;
//   - operations linear in their operands (addition, shifts, bitwise,
//     negation) on numbers past bigLinearWords words: offloaded (one such
//     call takes tens of milliseconds at most).
//
// Every result is math/big's own; operands small enough keep math/big's
// single call (the fast path, unchanged).

// Variables, so that tests can make them small and exercise the recursions
// on small numbers.
var (
	// bigMulBaseWords: math/big multiplies two numbers of this many words
	// in about a millisecond.
	bigMulBaseWords = 4096
	// bigMulBaseWork: and a product whose operands' word counts multiply
	// to at most this (a long number by a short one).
	bigMulBaseWork = 1 << 22
	// bigDivBaseWork: a math/big division whose quotient and divisor
	// word counts multiply to at most this is one call.
	bigDivBaseWork = 1 << 20
	// bigDivBaseBits: the recursive division's pieces.
	bigDivBaseBits = 1 << 17
	// bigTextBaseBits: math/big prints a number of this many bits in any
	// radix in about a millisecond.
	bigTextBaseBits = 1 << 17
	// bigParseBaseDigits: math/big parses this many digits in about a
	// millisecond (its time is quadratic in the digits).
	bigParseBaseDigits = 1 << 13
	// bigLinearWords: an operation linear in its operands runs in one call
	// up to this many words (a millisecond); larger ones are offloaded.
	bigLinearWords = 1 << 17
	// bigPollWords: word loops check for an interrupt this often (a power
	// of two).
	bigPollWords = 1 << 16
)

// nat is the non-negative number whose words are ws (little-endian),
// sharing them: it must only be read.
func nat(ws []big.Word) *big.Int {
	for len(ws) > 0 && ws[len(ws)-1] == 0 {
		ws = ws[:len(ws)-1]
	}
	return new(big.Int).SetBits(ws)
}

// bigPoll ends the operation if the execution was interrupted. The
// algorithms also run without a Runtime (r nil: conversions made where none
// is at hand), uninterruptible then.
func (r *Runtime) bigPoll() {
	if r != nil {
		r.vm.checkInterrupt()
	}
}

// makeWords is make([]big.Word, n): a long one is offloaded, since
// zeroing 128 MiB takes tens of milliseconds.
func (r *Runtime) makeWords(n int) []big.Word {
	var z []big.Word
	r.linear(n, func() { z = make([]big.Word, n) })
	return z
}

// copyWords copies src into dst, checking for an interrupt as it goes.
func (r *Runtime) copyWords(dst, src []big.Word) {
	for len(src) > bigPollWords {
		copy(dst, src[:bigPollWords])
		dst, src = dst[bigPollWords:], src[bigPollWords:]
		r.bigPoll()
	}
	copy(dst, src)
}

// addAt adds p into z at word offset off; z has room for the sum.
func (r *Runtime) addAt(z, p []big.Word, off int) {
	z = z[off:]
	var c uint
	for i, w := range p {
		if i&(bigPollWords-1) == bigPollWords-1 {
			r.bigPoll()
		}
		s, c1 := bits.Add(uint(z[i]), uint(w), c)
		z[i], c = big.Word(s), c1
	}
	for i := len(p); c != 0; i++ {
		if i&(bigPollWords-1) == bigPollWords-1 {
			r.bigPoll()
		}
		s, c1 := bits.Add(uint(z[i]), 0, c)
		z[i], c = big.Word(s), c1
	}
}

// subFrom subtracts p from z in place; z >= p.
func (r *Runtime) subFrom(z, p []big.Word) {
	var b uint
	for i, w := range p {
		if i&(bigPollWords-1) == bigPollWords-1 {
			r.bigPoll()
		}
		d, b1 := bits.Sub(uint(z[i]), uint(w), b)
		z[i], b = big.Word(d), b1
	}
	for i := len(p); b != 0; i++ {
		if i&(bigPollWords-1) == bigPollWords-1 {
			r.bigPoll()
		}
		d, b1 := bits.Sub(uint(z[i]), 0, b)
		z[i], b = big.Word(d), b1
	}
}

// addAbs is x + y for non-negative x and y.
func (r *Runtime) addAbs(x, y *big.Int) *big.Int {
	xs, ys := x.Bits(), y.Bits()
	if len(xs) < len(ys) {
		xs, ys = ys, xs
	}
	if len(xs) <= bigLinearWords {
		return new(big.Int).Add(x, y)
	}
	z := r.makeWords(len(xs) + 1)
	r.copyWords(z, xs)
	r.addAt(z, ys, 0)
	return nat(z)
}

// mulAbs is x × y for non-negative x and y; squaring when x == y.
func (r *Runtime) mulAbs(x, y *big.Int) *big.Int {
	xs, ys := x.Bits(), y.Bits()
	if len(xs) < len(ys) {
		x, y, xs, ys = y, x, ys, xs
	}
	nx, ny := len(xs), len(ys)
	if nx <= bigMulBaseWords || nx*ny <= bigMulBaseWork {
		return new(big.Int).Mul(x, y)
	}
	r.bigPoll()
	z := r.makeWords(nx + ny + 1)
	if 2*ny <= nx {
		// A long number by a shorter one: the sum of the products of
		// the long one's pieces by the short one, each balanced.
		k := max(ny, bigMulBaseWords)
		for off := 0; off < nx; off += k {
			r.bigPoll()
			p := r.mulAbs(nat(xs[off:min(off+k, nx)]), y)
			r.addAt(z, p.Bits(), off)
		}
		return nat(z)
	}
	// Karatsuba: x = x1·B + x0, y = y1·B + y0 with B = 2^(64h);
	// x·y = z2·B² + (z1 - z2 - z0)·B + z0 with z2 = x1·y1, z0 = x0·y0
	// and z1 = (x1 + x0)(y1 + y0).
	h := (nx + 1) / 2
	square := x == y
	x0, x1 := nat(xs[:h]), nat(xs[h:])
	y0, y1 := x0, x1
	if !square {
		y0, y1 = nat(ys[:min(h, ny)]), nat(ys[min(h, ny):])
	}
	z0 := r.mulAbs(x0, y0)
	z2 := r.mulAbs(x1, y1)
	sx := r.addAbs(x0, x1)
	sy := sx
	if !square {
		sy = r.addAbs(y0, y1)
	}
	z1 := r.mulAbs(sx, sy).Bits() // a new number: ours to change
	r.subFrom(z1, z0.Bits())
	r.subFrom(z1, z2.Bits())
	r.copyWords(z, z0.Bits())
	r.copyWords(z[2*h:], z2.Bits())
	r.addAt(z, nat(z1).Bits(), h)
	return nat(z)
}

// expAbs is x^e for x >= 0.
func (r *Runtime) expAbs(x *big.Int, e uint64) *big.Int {
	if e == 0 {
		return big.NewInt(1)
	}
	if uint64(x.BitLen())*e <= uint64(4*bigTextBaseBits) {
		return new(big.Int).Exp(x, new(big.Int).SetUint64(e), nil)
	}
	z := x
	for i := bits.Len64(e) - 2; i >= 0; i-- {
		z = r.mulAbs(z, z)
		if e>>uint(i)&1 == 1 {
			z = r.mulAbs(z, x)
		}
	}
	return z
}

// shl and shr shift a non-negative x, offloading a long shift.
func (r *Runtime) shl(x *big.Int, n uint) *big.Int {
	var z *big.Int
	r.linear(len(x.Bits())+int(n/bits.UintSize), func() { z = new(big.Int).Lsh(x, n) })
	return z
}

func (r *Runtime) shr(x *big.Int, n uint) *big.Int {
	var z *big.Int
	r.linear(len(x.Bits()), func() { z = new(big.Int).Rsh(x, n) })
	return z
}

// lowBits is x mod 2^n for x >= 0.
func (r *Runtime) lowBits(x *big.Int, n uint) *big.Int {
	xs := x.Bits()
	w := int(n / bits.UintSize)
	if w >= len(xs) {
		return x
	}
	z := r.makeWords(w + 1)
	r.copyWords(z, xs[:w+1])
	z[w] &= big.Word(1)<<(n%bits.UintSize) - 1
	return nat(z)
}

// sub is x - y, offloaded when long.
func (r *Runtime) sub(x, y *big.Int) *big.Int {
	var z *big.Int
	r.linear(max(len(x.Bits()), len(y.Bits())), func() { z = new(big.Int).Sub(x, y) })
	return z
}

// linear runs f, an operation linear in n words, at once when it is short
// and offloaded otherwise.
func (r *Runtime) linear(n int, f func()) {
	if n <= bigLinearWords || r == nil {
		f()
		return
	}
	r.offload(f)
}

// quoRemAbs is the quotient and remainder of a >= 0 by b > 0.
func (r *Runtime) quoRemAbs(a, b *big.Int) (q, m *big.Int) {
	na, nb := len(a.Bits()), len(b.Bits())
	if na < nb || (na-nb+1)*nb <= bigDivBaseWork {
		return new(big.Int).QuoRem(a, b, new(big.Int))
	}
	r.bigPoll()
	// Normalize b to a whole number of words: a·2^s / b·2^s has the same
	// quotient, and the remainder is shifted by s.
	s := uint(-b.BitLen()) % bits.UintSize
	a, b = r.shl(a, s), r.shl(b, s)
	n := uint(b.BitLen())
	nw := int(n / bits.UintSize)
	// The quotient's digits, from the most significant: digits of dw
	// words, each the quotient of the remainder so far followed by the
	// next digit of a, by b.
	dw := nw
	if n > uint(bigDivBaseBits) {
		// Digits of b's size, each divided by the recursive division.
	} else if dw < bigDivBaseWork/nb {
		dw = bigDivBaseWork / nb
	}
	as := a.Bits()
	qs := r.makeWords(len(as) + 1)
	rem := new(big.Int)
	top := len(as) - (len(as)-1)%dw - 1 // the most significant digit's offset
	for off := top; off >= 0; off -= dw {
		r.bigPoll()
		d := as[off:min(off+dw, len(as))]
		// u = rem·2^(64·dw) + d, by words: rem < b has at most nw words.
		u := r.makeWords(dw + len(rem.Bits()))
		r.copyWords(u, d)
		r.copyWords(u[dw:], rem.Bits())
		var qd *big.Int
		if dw == nw && n > uint(bigDivBaseBits) {
			qd, rem = r.div2n1n(nat(u), b, n)
		} else {
			qd, rem = new(big.Int).QuoRem(nat(u), b, new(big.Int))
		}
		r.copyWords(qs[off:], qd.Bits())
	}
	return nat(qs), r.shr(rem, s)
}

// div2n1n divides a < 2^n·b by b of exactly n bits (_div2n1n).
func (r *Runtime) div2n1n(a, b *big.Int, n uint) (q, m *big.Int) {
	if n <= uint(bigDivBaseBits) {
		return new(big.Int).QuoRem(a, b, new(big.Int))
	}
	r.bigPoll()
	pad := n&1 == 1
	if pad {
		a, b, n = r.shl(a, 1), r.shl(b, 1), n+1
	}
	half := n / 2
	b1, b2 := r.shr(b, half), r.lowBits(b, half)
	q1, m := r.div3n2n(r.shr(a, n), r.lowBits(r.shr(a, half), half), b, b1, b2, half)
	q2, m := r.div3n2n(m, r.lowBits(a, half), b, b1, b2, half)
	if pad {
		m = r.shr(m, 1)
	}
	// q2 < 2^half: q1·2^half + q2 by words.
	return r.addAbs(r.shl(q1, half), q2), m
}

// div3n2n is _div3n2n: a12·2^n + a3 divided by b = b1·2^n + b2.
func (r *Runtime) div3n2n(a12, a3, b, b1, b2 *big.Int, n uint) (q, m *big.Int) {
	if r.shr(a12, n).Cmp(b1) == 0 {
		q = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), n), big.NewInt(1))
		m = r.addAbs(r.sub(a12, r.shl(b1, n)), b1)
	} else {
		q, m = r.div2n1n(a12, b1, n)
	}
	m = r.sub(r.addAbs(r.shl(m, n), a3), r.mulAbs(q, b2))
	for m.Sign() < 0 {
		q.Sub(q, big.NewInt(1))
		var s *big.Int
		r.linear(len(m.Bits()), func() { s = new(big.Int).Add(m, b) })
		m = s
	}
	return q, m
}

// quoRem is BigInt division: the quotient truncated towards zero and the
// remainder with the dividend's sign; b != 0.
func (r *Runtime) quoRem(a, b *big.Int) (q, m *big.Int) {
	if len(a.Bits()) < len(b.Bits()) || (len(a.Bits())-len(b.Bits())+1)*len(b.Bits()) <= bigDivBaseWork {
		return new(big.Int).QuoRem(a, b, new(big.Int))
	}
	q, m = r.quoRemAbs(new(big.Int).SetBits(a.Bits()), new(big.Int).SetBits(b.Bits()))
	if a.Sign() != b.Sign() {
		q.Neg(q)
	}
	if a.Sign() < 0 {
		m.Neg(m)
	}
	return q, m
}

// radixPowers are radix^(d·2^i), i = 0, 1, ..., for printing and parsing in
// radix by divide and conquer.
type radixPowers struct {
	radix  int
	digits []int      // d·2^i
	pow    []*big.Int // radix^digits[i]
}

func newRadixPowers(radix int) *radixPowers {
	// d digits make about bigTextBaseBits/4 bits.
	d := int(float64(bigTextBaseBits/4) / log2(radix))
	p := &radixPowers{radix: radix, digits: []int{d}}
	p.pow = []*big.Int{new(big.Int).Exp(big.NewInt(int64(radix)), big.NewInt(int64(d)), nil)}
	return p
}

func log2(n int) float64 {
	l := float64(bits.Len(uint(n)) - 1)
	return l + float64(n)/float64(uint(1)<<uint(l)) - 1 // within 0.09 of log2
}

// upTo makes sure the powers include level i.
func (p *radixPowers) upTo(r *Runtime, i int) {
	for len(p.pow) <= i {
		last := p.pow[len(p.pow)-1]
		p.pow = append(p.pow, r.mulAbs(last, last))
		p.digits = append(p.digits, 2*p.digits[len(p.digits)-1])
	}
}

// bigText is x in radix, as x.Text(radix) gives it.
func (r *Runtime) bigText(x *big.Int, radix int) string {
	if x.BitLen() <= bigTextBaseBits {
		return x.Text(radix)
	}
	abs := absOf(x)
	var b strings.Builder
	r.linear(abs.BitLen()/bits.UintSize, func() { b.Grow(int(float64(abs.BitLen())/log2(radix)) + 2) })
	if x.Sign() < 0 {
		b.WriteByte('-')
	}
	if radix&(radix-1) == 0 {
		r.textPow2(&b, abs, uint(bits.TrailingZeros(uint(radix))))
		return b.String()
	}
	p := newRadixPowers(radix)
	// The top level: the smallest power whose square exceeds x.
	level := 0
	for ; 2*p.pow[level].BitLen()-2 < abs.BitLen(); level++ {
		p.upTo(r, level+1)
	}
	r.textRec(&b, abs, p, level, 0)
	return b.String()
}

// textRec writes x < pow[level]^2 in p's radix, zero-padded to pad digits.
func (r *Runtime) textRec(b *strings.Builder, x *big.Int, p *radixPowers, level, pad int) {
	for level >= 0 && x.BitLen() > bigTextBaseBits && x.Cmp(p.pow[level]) < 0 {
		level--
	}
	if level < 0 || x.BitLen() <= bigTextBaseBits {
		s := x.Text(p.radix)
		if x.Sign() == 0 && pad > 0 {
			s = ""
		}
		for i := len(s); i < pad; i++ {
			b.WriteByte('0')
		}
		b.WriteString(s)
		return
	}
	r.bigPoll()
	q, m := r.quoRemAbs(x, p.pow[level])
	r.textRec(b, q, p, level-1, max(pad-p.digits[level], 0))
	r.textRec(b, m, p, level-1, p.digits[level])
}

// textPow2 writes x > 0 in radix 2^k.
func (r *Runtime) textPow2(b *strings.Builder, x *big.Int, k uint) {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	xs := x.Bits()
	n := (x.BitLen() + int(k) - 1) / int(k)
	mask := uint(1)<<k - 1
	for i := n - 1; i >= 0; i-- {
		if i&(bigPollWords-1) == 0 {
			r.bigPoll()
		}
		bit := uint(i) * k
		w, o := int(bit/bits.UintSize), bit%bits.UintSize
		d := uint(xs[w]) >> o
		if o+k > bits.UintSize && w+1 < len(xs) {
			d |= uint(xs[w+1]) << (bits.UintSize - o)
		}
		b.WriteByte(digits[d&mask])
	}
}

func init() {
	// BigInt literals parse as BigInt(string) does, subquadratic (the
	// compiler has no Runtime: uninterruptible, bounded by the source's
	// size).
	parser.ParseBigIntDigits = func(digits string, radix int) *big.Int {
		return (*Runtime)(nil).bigParse(digits, radix)
	}
}

// bigParse is the value of digits (each a valid digit of radix 2, 8, 10 or
// 16, at least one), as SetString gives it.
func (r *Runtime) bigParse(digits string, radix int) *big.Int {
	if len(digits) <= bigParseBaseDigits {
		z, _ := new(big.Int).SetString(digits, radix)
		return z
	}
	if radix&(radix-1) == 0 {
		return r.parsePow2(digits, uint(bits.TrailingZeros(uint(radix))))
	}
	p := newRadixPowers(radix)
	level := 0
	for p.digits[level]*2 < len(digits) {
		level++
		p.upTo(r, level)
	}
	return r.parseRec(digits, p, level)
}

func (r *Runtime) parseRec(digits string, p *radixPowers, level int) *big.Int {
	for level >= 0 && p.digits[level] >= len(digits) {
		level--
	}
	if level < 0 || len(digits) <= bigParseBaseDigits {
		z, _ := new(big.Int).SetString(digits, p.radix)
		return z
	}
	r.bigPoll()
	cut := len(digits) - p.digits[level]
	hi := r.parseRec(digits[:cut], p, level)
	lo := r.parseRec(digits[cut:], p, level-1)
	return r.addAbs(r.mulAbs(hi, p.pow[level]), lo)
}

// parsePow2 is the value of digits in radix 2^k.
func (r *Runtime) parsePow2(digits string, k uint) *big.Int {
	z := r.makeWords(int((uint(len(digits))*k+bits.UintSize-1)/bits.UintSize + 1))
	for i := 0; i < len(digits); i++ {
		if i&(bigPollWords-1) == bigPollWords-1 {
			r.bigPoll()
		}
		c := digits[len(digits)-1-i]
		var d uint
		switch {
		case c >= '0' && c <= '9':
			d = uint(c - '0')
		case c >= 'a' && c <= 'z':
			d = uint(c-'a') + 10
		default:
			d = uint(c-'A') + 10
		}
		bit := uint(i) * k
		w, o := bit/bits.UintSize, bit%bits.UintSize
		z[w] |= big.Word(d << o)
		if o+k > bits.UintSize {
			z[w+1] |= big.Word(d >> (bits.UintSize - o))
		}
	}
	return nat(z)
}
