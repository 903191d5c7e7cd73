package goja

import (
	"errors"
	"math/big"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/mustard-sidecar/mustard-sidecar/internal/longtest"
)

// smallBigPieces makes the interruptible algorithms' pieces tiny, so that
// small numbers go through every recursion, and restores them after.
func smallBigPieces(t *testing.T) {
	saved := []int{bigMulBaseWords, bigMulBaseWork, bigDivBaseWork, bigDivBaseBits, bigTextBaseBits, bigParseBaseDigits, bigLinearWords, bigPollWords}
	bigMulBaseWords, bigMulBaseWork, bigDivBaseWork, bigDivBaseBits = 3, 8, 8, 20
	bigTextBaseBits, bigParseBaseDigits, bigLinearWords, bigPollWords = 100, 5, 6, 4
	t.Cleanup(func() {
		bigMulBaseWords, bigMulBaseWork, bigDivBaseWork, bigDivBaseBits = saved[0], saved[1], saved[2], saved[3]
		bigTextBaseBits, bigParseBaseDigits, bigLinearWords, bigPollWords = saved[4], saved[5], saved[6], saved[7]
	})
}

// randBig is a random number of up to maxBits bits, often with long runs of
// ones or zeros (the carries and borrows that go far), either sign.
func randBig(rnd *rand.Rand, maxBits int) *big.Int {
	n := rnd.Intn(maxBits + 1)
	x := new(big.Int)
	switch rnd.Intn(4) {
	case 0: // 2^n - 1
		x.Sub(x.Lsh(big.NewInt(1), uint(n)), big.NewInt(1))
	case 1: // 2^n
		x.Lsh(big.NewInt(1), uint(n))
	default:
		x.Rand(rnd, new(big.Int).Lsh(big.NewInt(1), uint(n)+1))
	}
	if rnd.Intn(2) == 0 {
		x.Neg(x)
	}
	return x
}

func TestBigPiecesAgreeWithMathBig(t *testing.T) {
	smallBigPieces(t)
	r := New()
	rnd := rand.New(rand.NewSource(1))
	rounds := 3000
	if testing.Short() || raceEnabled {
		rounds = longtest.Pick(100, 300)
	}
	for i := 0; i < rounds; i++ {
		x, y := randBig(rnd, 3000), randBig(rnd, 3000)
		if rnd.Intn(3) == 0 {
			y = randBig(rnd, 200)
		}
		ax, ay := new(big.Int).Abs(x), new(big.Int).Abs(y)
		if got, want := r.mulAbs(ax, ay), new(big.Int).Mul(ax, ay); got.Cmp(want) != 0 {
			t.Fatalf("%v × %v: %v, want %v", x, y, got, want)
		}
		if got, want := r.mulAbs(ax, ax), new(big.Int).Mul(ax, ax); got.Cmp(want) != 0 {
			t.Fatalf("%v²: %v, want %v", x, got, want)
		}
		if y.Sign() != 0 {
			q, m := r.quoRem(x, y)
			wq, wm := new(big.Int).QuoRem(x, y, new(big.Int))
			if q.Cmp(wq) != 0 || m.Cmp(wm) != 0 {
				t.Fatalf("%v / %v: %v %v, want %v %v", x, y, q, m, wq, wm)
			}
		}
		if e := uint64(rnd.Intn(40)); x.BitLen() < 200 {
			if got, want := r.expAbs(ax, e), new(big.Int).Exp(ax, new(big.Int).SetUint64(e), nil); got.Cmp(want) != 0 {
				t.Fatalf("%v ** %d: %v, want %v", ax, e, got, want)
			}
		}
		radix := 2 + rnd.Intn(35)
		if got, want := r.bigText(x, radix), x.Text(radix); got != want {
			t.Fatalf("%v in radix %d: %s, want %s", x, radix, got, want)
		}
		for _, radix := range []int{2, 8, 10, 16} {
			digits := ax.Text(radix)
			if rnd.Intn(2) == 0 {
				digits = strings.Repeat("0", rnd.Intn(30)) + digits
			}
			if radix == 16 && rnd.Intn(2) == 0 {
				digits = strings.ToUpper(digits)
			}
			if got := r.bigParse(digits, radix); got.Cmp(ax) != 0 {
				t.Fatalf("%s in radix %d: %v, want %v", digits, radix, got, ax)
			}
		}
	}
}

// Long BigInt operations end soon after an Interrupt from another
// goroutine: each would run for seconds as one math/big call (or longer:
// math/big parses in quadratic time).
func TestBigIntOperationsAreInterruptible(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("seconds of BigInt arithmetic (ten times that under the race detector; the engine's tests stop these operations under it)")
	}
	r := New()
	// Operands that take seconds to combine, made in well under one.
	_, err := r.RunString(`var x = 3n ** 20000000n, y = 5n ** 20000000n, d = 7n ** 4000000n, s = '1'.repeat(2e7)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		`3n ** BigInt(1e8)`,
		`BigInt(s)`,
		`x * y`,
		`x * x`,
		`x / d`,
		`x % d`,
		`String(x)`,
		`'' + x`,
		`x.toString(7)`,
	} {
		t.Run(src, func(t *testing.T) {
			prg := MustCompile("", src, false)
			stopped := make(chan time.Time, 1)
			timer := time.AfterFunc(100*time.Millisecond, func() {
				stopped <- time.Now()
				r.Interrupt("stop")
			})
			defer timer.Stop()
			_, err := r.RunProgram(prg)
			ended := time.Now()
			r.ClearInterrupt()
			var ie *InterruptedError
			if !errors.As(err, &ie) {
				t.Fatalf("%v, want the interrupt", err)
			}
			latency := ended.Sub(<-stopped)
			t.Logf("ended %v after Interrupt", latency)
			if latency > 5*time.Second { // a hang, not a measure
				t.Errorf("ended %v after Interrupt", latency)
			}
		})
	}
}

// BigInt literals parse as BigInt(string) does, subquadratic, to
// math/big's values, in every radix and with separators; what is not a
// BigInt literal stays a syntax error.
func TestBigIntLiteralParse(t *testing.T) {
	defer func(d int) { bigParseBaseDigits = d }(bigParseBaseDigits)
	bigParseBaseDigits = 8 // the recursion on short literals too
	long := strings.Repeat("9876543210", 30)
	for _, lit := range []string{
		"0", "7", "123456789", long, "1_000_000", "9_8_7" + long,
		"0x" + strings.Repeat("fF", 70), "0X1_f", "0o" + strings.Repeat("7", 90), "0O7_7", "0b" + strings.Repeat("10", 100), "0B1_0",
	} {
		want, ok := new(big.Int).SetString(lit, 0)
		if !ok {
			t.Fatalf("%s: not a number to math/big", lit)
		}
		v, err := New().RunString(lit + "n")
		if err != nil {
			t.Errorf("%s: %v", lit, err)
			continue
		}
		if got, ok := v.Export().(*big.Int); !ok || got.Cmp(want) != 0 {
			t.Errorf("%.40s: %v, want %v", lit, v, want)
		}
	}
	for _, lit := range []string{"1__0n", "1_n", "0x_1n", "07n", "00n", "1.5n", "1e3n", "0xgn", "0o8n", "0b2n"} {
		if _, err := New().RunString(lit); err == nil || !strings.Contains(err.Error(), "SyntaxError") {
			t.Errorf("%s: %v, want a SyntaxError", lit, err)
		}
	}
	bigParseBaseDigits = 1 << 13
	// A million decimal digits, and two million octal ones: math/big took
	// 3.2 s for the first, and 2.75 s for a million octal digits (its
	// parse is quadratic: four times that for two million).
	for _, c := range []struct {
		lit   string
		bound time.Duration
	}{{strings.Repeat("7", 1<<20), 5 * time.Second}, {"0o" + strings.Repeat("7", 2<<20), 2 * time.Second}} {
		began := time.Now()
		if _, err := Compile("", "const x = "+c.lit+"n", true); err != nil {
			t.Fatal(err)
		}
		// The bounds are ten times a quiet machine's time; the race
		// detector slows the parse about tenfold again.
		if raceEnabled {
			c.bound *= 10
		}
		if d := time.Since(began); d > c.bound {
			t.Errorf("a literal of %d digits compiled in %v", len(c.lit), d)
		}
	}
}
