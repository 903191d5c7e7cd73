package value

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/mustard-sidecar/mustard-sidecar/internal/detcbor"
	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
)

// The JSON wire form is an externally tagged enum:
//
//	"Undefined"  "Null"  "Hole"  {"Bool":true}  {"String":"text"}
//	{"Number":{"Finite":1.5}}  {"Number":"NaN"}  {"Number":"Infinity"}
//	{"Number":"NegInfinity"}  {"Number":"NegZero"}
//	{"Array":[...]}  {"Object":{"key":...}}
//
// Decoding also accepts {"Undefined":null}, {"Null":null} and {"Hole":null};
// encoding always writes the string spelling.

// AppendJSON appends the JSON wire form of v to dst. It writes whatever v
// holds, even a value that Validate rejects; an unknown kind is written as
// null, which no decoder accepts. Strings are written as UTF-8 with an
// unpaired surrogate as its \u escape and any other invalid byte as U+FFFD.
func (v Value) AppendJSON(dst []byte) []byte {
	return appendJSON(dst, &v)
}

// String returns the JSON wire form of v (as AppendJSON writes it), so
// that fmt prints a value as the protocol shows it, not its fields.
func (v Value) String() string { return string(v.AppendJSON(nil)) }

// MarshalJSON returns the JSON wire form of v, or the Validate error if v
// cannot cross the boundary.
func (v Value) MarshalJSON() ([]byte, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return appendJSON(nil, &v), nil
}

// UnmarshalJSON decodes the JSON wire form into v. The JSON literal null is
// not a StructuredValue and is rejected; use a *Value field for an optional
// value.
func (v *Value) UnmarshalJSON(b []byte) error {
	x, err := ParseJSON(b)
	if err != nil {
		return err
	}
	*v = x
	return nil
}

func appendJSON(dst []byte, v *Value) []byte {
	switch v.Kind {
	case KindUndefined:
		return append(dst, `"Undefined"`...)
	case KindNull:
		return append(dst, `"Null"`...)
	case KindHole:
		return append(dst, `"Hole"`...)
	case KindBool:
		if v.Bool {
			return append(dst, `{"Bool":true}`...)
		}
		return append(dst, `{"Bool":false}`...)
	case KindString:
		dst = append(dst, `{"String":`...)
		dst = appendJSONString(dst, v.Str)
		return append(dst, '}')
	case KindNumber:
		return appendJSONNumber(dst, v.Num)
	case KindArray:
		dst = append(dst, `{"Array":[`...)
		for i := range v.Elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, &v.Elems[i])
		}
		return append(dst, "]}"...)
	case KindObject:
		dst = append(dst, `{"Object":{`...)
		for i := range v.Members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, v.Members[i].Key)
			dst = append(dst, ':')
			dst = appendJSON(dst, &v.Members[i].Value)
		}
		return append(dst, "}}"...)
	}
	return append(dst, "null"...)
}

func appendJSONNumber(dst []byte, f float64) []byte {
	switch {
	case f != f:
		return append(dst, `{"Number":"NaN"}`...)
	case math.IsInf(f, 1):
		return append(dst, `{"Number":"Infinity"}`...)
	case math.IsInf(f, -1):
		return append(dst, `{"Number":"NegInfinity"}`...)
	case f == 0 && math.Signbit(f):
		return append(dst, `{"Number":"NegZero"}`...)
	}
	dst = append(dst, `{"Number":{"Finite":`...)
	dst = appendFinite(dst, f)
	return append(dst, "}}"...)
}

// appendFinite writes the shortest decimal that parses back to f, laid out
// as Rust's ryu/serde_json does (6.0, 0.001, 1e21, 1.5e-7) so the host and
// the sidecar spell numbers identically. f must be finite.
func appendFinite(dst []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // -d.ddde±dd
	if s[0] == '-' {
		dst = append(dst, '-')
		s = s[1:]
	}
	var digits [24]byte
	n, i := 0, 0
	for ; s[i] != 'e'; i++ {
		if s[i] != '.' {
			digits[n] = s[i]
			n++
		}
	}
	i++ // 'e'
	negExp := s[i] == '-'
	exp := 0
	for i++; i < len(s); i++ {
		exp = exp*10 + int(s[i]-'0')
	}
	if negExp {
		exp = -exp
	}
	// The value is 0.digits × 10^kk.
	kk := exp + 1
	switch {
	case kk >= n && kk <= 16:
		dst = append(dst, digits[:n]...)
		for j := n; j < kk; j++ {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	case kk > 0 && kk <= 16:
		dst = append(dst, digits[:kk]...)
		dst = append(dst, '.')
		return append(dst, digits[kk:n]...)
	case kk > -5 && kk <= 0:
		dst = append(dst, '0', '.')
		for j := kk; j < 0; j++ {
			dst = append(dst, '0')
		}
		return append(dst, digits[:n]...)
	}
	dst = append(dst, digits[0])
	if n > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:n]...)
	}
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, int64(kk-1), 10)
}

// jsonSafe marks the ASCII bytes a JSON string may hold unescaped.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendJSONText appends s as a JSON string, as a value's text is written
// (AppendJSON): an unpaired surrogate (WTF-8) as its \u escape, a byte
// that is not UTF-8 as \ufffd, anything else that JSON allows raw as it
// is. A long string is escaped a block at a time.
func AppendJSONText(dst []byte, s string) []byte { return appendJSONString(dst, s) }

func appendJSONString(dst []byte, s string) []byte {
	// Room for the string and a few escapes at once: a long one appended
	// run by run would otherwise grow dst many times, copying it each time.
	dst = slices.Grow(dst, len(s)+len(s)/8+2)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if len(s)-i >= textBlock+textOver {
			dst, i = appendEscapedBlocks(append(dst, s[start:i]...), s, i)
			start = i
		}
		// Plain ASCII a word at a time, to the next byte that may need
		// escaping or is not ASCII.
		for ; len(s)-i >= 8; i += 8 {
			if m := jsonscan.Specials(jsonscan.Word(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size > 1 {
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		if u, ok := surrogateAt(s, i); ok {
			dst = append(dst, '\\', 'u', hexDigits[u>>12], hexDigits[u>>8&0xF], hexDigits[u>>4&0xF], hexDigits[u&0xF])
			i += 3
		} else {
			dst = append(dst, `\ufffd`...)
			i++
		}
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// A long string is unescaped and escaped textBlock bytes at a time
// (unescapeBlocks, appendEscapedBlocks), each block's reads and writes
// reaching up to textOver bytes past it: an escape begun in its last
// byte ends at most 11 bytes past it (a surrogate pair), and a copy of
// sixteen bytes may start up to 3 past it (a multi-byte sequence).
const textBlock, textOver = 64, 32

// appendEscapedBlocks appends s from i to dst as JSON string text, 64
// bytes at a time while s has that and textOver more, and stops
// early at a byte that is not UTF-8, which its caller writes. It returns
// dst and where it stopped.
//
// As unescapeBlocks, it finds a block's special bytes at once and walks
// them: the text before each is copied sixteen bytes at a time, and an
// escape is written as one word from a table, so that neither costs a
// branch on its length. A multi-byte sequence is checked and left in
// the text to copy, in the same lines as unescapeBlocks's: a function
// both called, not inlined, made text with a non-ASCII letter every few
// words 40-50 % slower.
func appendEscapedBlocks(dst []byte, s string, i int) ([]byte, int) {
	const block, over = textBlock, textOver
	// Read through a byte view of s, never written: the copies are
	// unescapeBlocks's, loads a word at a time.
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	for len(b)-i >= block+over {
		// Every byte of a block may become a six-byte escape.
		dst = slices.Grow(dst, 6*block+over)
		in := b[i : i+block+over]
		n := len(dst)
		out := dst[n : n+6*block+over]
		m := jsonscan.SpecialsBlock(in)
		src, o := 0, 0 // in[src:p] is still to copy, to out[o:]
		for m != 0 {
			p := bits.TrailingZeros64(m)
			c := in[p]
			if c >= utf8.RuneSelf {
				r, size := utf8.DecodeRune(in[p:])
				if r == utf8.RuneError && size == 1 {
					return dst[:n+copyRun(out, o, in, src, p)], i + p
				}
				m &^= (1<<size - 1) << p
				if p+size > block {
					m, p = 0, p+size // the rest of the block, and this, are one run
					o = copyRun(out, o, in, src, p)
					src = p
				}
				continue
			}
			o = copyRun(out, o, in, src, p)
			binary.LittleEndian.PutUint64(out[o:], escapeWords[c])
			o += int(escapeLens[c])
			src = p + 1
			m &= m - 1
		}
		if src < block {
			o = copyRun(out, o, in, src, block)
			src = block
		}
		dst, i = dst[:n+o], i+src
	}
	return dst, i
}

// escapeWords is, for each ASCII byte a JSON string cannot hold as it is,
// its escape as a little-endian word, and escapeLens its length: the
// short escapes where JSON has one, \u00XX for other control characters.
var escapeWords, escapeLens = func() (w [utf8.RuneSelf]uint64, l [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		var e []byte
		switch {
		case c == '"' || c == '\\':
			e = []byte{'\\', byte(c)}
		case c == '\n':
			e = []byte(`\n`)
		case c == '\r':
			e = []byte(`\r`)
		case c == '\t':
			e = []byte(`\t`)
		case c < 0x20:
			e = []byte{'\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF]}
		default:
			continue
		}
		var b [8]byte
		copy(b[:], e)
		w[c], l[c] = binary.LittleEndian.Uint64(b[:]), uint8(len(e))
	}
	return w, l
}()

// ParseJSON decodes one StructuredValue from its JSON wire form, with
// optional surrounding whitespace and nothing else.
//
// Object members keep their order. An object with a repeated key is
// rejected: a JavaScript object cannot have one, and accepting it would mean
// silently choosing between the copies. Text must be valid UTF-8; \u escapes
// of unpaired surrogates are kept (as WTF-8), never replaced.
//
// The decoder is built for hostile input: recursion stops at MaxDepth,
// memory use is linear in the input size and errors never panic.
func ParseJSON(b []byte) (Value, error) {
	d := jsonDecoder{b: b, scratch: getScratch()}
	defer d.release()
	v, err := d.value(0, posTop)
	if err != nil {
		return Value{}, err
	}
	d.skipWS()
	if d.i < len(d.b) {
		return Value{}, invalidf("unexpected data after the value at offset %d", d.i)
	}
	return v, nil
}

// TranscodeJSON is ParseJSON writing the value's binary form (AppendCBOR)
// instead of building it: the same acceptance and the same errors, in one
// pass, without the Value tree. A resume's answer goes to the journal and
// into the guest from these bytes; for structured data the tree took many
// times their size and lived only until it was imported. The result is
// the caller's own memory.
func TranscodeJSON(b []byte) ([]byte, error) {
	out, n, err := TranscodeJSONValue(b)
	if err != nil {
		return nil, err
	}
	d := jsonDecoder{b: b, i: n}
	d.skipWS()
	if d.i < len(d.b) {
		return nil, invalidf("unexpected data after the value at offset %d", d.i)
	}
	return out, nil
}

// TranscodeJSONValue is TranscodeJSON for the value at the start of b,
// which more text may follow: it returns the value's binary form and where
// its text ends. A request decoder meets an answer inside its payload
// object and reads it once, instead of skipping it to find its end first.
func TranscodeJSONValue(b []byte) (out []byte, n int, err error) {
	s := getScratch()
	d := jsonDecoder{b: b, scratch: s, cbor: true}
	defer d.release()
	// Every item's binary form is shorter than its JSON wire form (a
	// variant object or a quoted name around it), heads included, so
	// room for the rest of the input is room enough and the output never
	// grows. That room is the scratch's. A result about its size is
	// handed over, as the room was allocated for it (a resume's one
	// answer); one much smaller is copied out at its own size and the
	// room kept: a value followed by much more input (the first answer of
	// a batch) had the rest's size allocated, cleared, and then kept by
	// the journal that keeps the answer.
	pooled := len(b) <= maxPooledOut
	switch {
	case !pooled:
		d.out = make([]byte, 0, len(b))
	case cap(s.out) < len(b):
		s.out = make([]byte, 0, len(b))
		fallthrough
	default:
		d.out = s.out[:0]
	}
	if _, err := d.value(0, posTop); err != nil {
		return nil, 0, err
	}
	out = d.assemble()
	if pooled {
		if cap(out)-len(out) <= len(out)/8+512 {
			s.out = nil
		} else {
			s.out = out[:0]
			out = append([]byte(nil), out...) // not cleared first, as make would
		}
	}
	return out, d.i, nil
}

// ParseJSONString decodes one JSON string (with optional surrounding
// whitespace) to WTF-8, keeping \u escapes of unpaired surrogates, as
// ParseJSON does for String values.
func ParseJSONString(b []byte) (string, error) {
	d := jsonDecoder{b: b, scratch: getScratch()}
	defer d.release()
	d.skipWS()
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", invalidf("expected a string")
	}
	s, err := d.str()
	if err != nil {
		return "", err
	}
	out := string(s)
	d.skipWS()
	if d.i < len(d.b) {
		return "", invalidf("unexpected data after the string at offset %d", d.i)
	}
	return out, nil
}

type jsonDecoder struct {
	b []byte
	i int
	*scratch

	// cbor (TranscodeJSON): the decoder appends each value's binary form
	// to out instead of building it. An array's or object's count is not
	// known where its head goes, so heads are noted and put in place by
	// assemble.
	cbor bool
	out  []byte
}

// pendingHead is the head of an array or object of a transcoded value:
// major with argument n, written before out[at].
type pendingHead struct {
	at    int
	major byte
	n     uint64
}

// scalar returns v, and in cbor mode writes it.
func (d *jsonDecoder) scalar(v Value) Value {
	if d.cbor {
		d.out = appendCBOR(d.out, &v)
	}
	return v
}

// openHead notes the head of an array or object that starts here and
// returns its index, for its count.
func (d *jsonDecoder) openHead(major byte) int {
	d.heads = append(d.heads, pendingHead{at: len(d.out), major: major})
	return len(d.heads) - 1
}

// assemble puts every noted head in place in out, moving what follows
// each one up, last first, and returns out.
func (d *jsonDecoder) assemble() []byte {
	extra := 0
	for _, h := range d.heads {
		extra += headLen(h.n)
	}
	if extra == 0 {
		return d.out
	}
	out := slices.Grow(d.out, extra)[:len(d.out)+extra]
	end := len(d.out) // the part not yet moved is out[:end]
	for k := len(d.heads) - 1; k >= 0; k-- {
		h := d.heads[k] // heads start in order: at never decreases
		copy(out[h.at+extra:], out[h.at:end])
		extra -= headLen(h.n)
		detcbor.AppendHead(out[h.at+extra:h.at+extra], h.major, h.n)
		end = h.at
	}
	return out
}

// headLen is the length of a head with argument n in its shortest form.
func headLen(n uint64) int {
	switch {
	case n < 24:
		return 1
	case n <= math.MaxUint8:
		return 2
	case n <= math.MaxUint16:
		return 3
	case n <= math.MaxUint32:
		return 5
	}
	return 9
}

func (d *jsonDecoder) skipWS() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (d *jsonDecoder) peek() byte {
	d.skipWS()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *jsonDecoder) expected(what string) error {
	if d.i >= len(d.b) {
		return invalidf("expected %s, found end of input", what)
	}
	c := d.b[d.i]
	if c > 0x20 && c < 0x7F {
		return invalidf("expected %s, found %q at offset %d", what, c, d.i)
	}
	return invalidf("expected %s, found byte 0x%02x at offset %d", what, c, d.i)
}

func (d *jsonDecoder) expect(c byte, what string) error {
	if d.peek() != c {
		return d.expected(what)
	}
	d.i++
	return nil
}

// literal consumes the JSON literal lit (null, true or false).
func (d *jsonDecoder) literal(lit string) bool {
	d.skipWS()
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

// value decodes a StructuredValue inside depth arrays and objects.
func (d *jsonDecoder) value(depth int, pos position) (Value, error) {
	switch d.peek() {
	case '"':
		name, err := d.str()
		if err != nil {
			return Value{}, err
		}
		switch string(name) {
		case "Undefined":
			return d.scalar(Value{}), nil
		case "Null":
			return d.scalar(Value{Kind: KindNull}), nil
		case "Hole":
			if pos != posElem {
				return Value{}, errHolePlacement
			}
			return d.scalar(Value{Kind: KindHole}), nil
		case "Bool", "String", "Number", "Array", "Object":
			return Value{}, invalidf("variant %q requires content", name)
		}
		return Value{}, invalidf("unknown variant %s", quoteSnippet(string(name)))
	case '{':
		d.i++
		return d.variant(depth, pos)
	}
	return Value{}, d.expected("a StructuredValue")
}

// variant decodes the single-key object form, after its '{'.
func (d *jsonDecoder) variant(depth int, pos position) (Value, error) {
	if d.peek() != '"' {
		if d.i < len(d.b) && d.b[d.i] == '}' {
			return Value{}, invalidf("a variant object must have exactly one key")
		}
		return Value{}, d.expected("a variant name")
	}
	name, err := d.str()
	if err != nil {
		return Value{}, err
	}
	if err := d.expect(':', "':'"); err != nil {
		return Value{}, err
	}
	var v Value
	switch string(name) {
	case "Undefined", "Null", "Hole":
		switch string(name) {
		case "Null":
			v.Kind = KindNull
		case "Hole":
			if pos != posElem {
				return Value{}, errHolePlacement
			}
			v.Kind = KindHole
		}
		if !d.literal("null") {
			return Value{}, invalidf("variant %q takes no content, expected null", name)
		}
	case "Bool":
		switch {
		case d.literal("true"):
			v = Value{Kind: KindBool, Bool: true}
		case d.literal("false"):
			v = Value{Kind: KindBool}
		default:
			return Value{}, invalidf("Bool must be true or false")
		}
	case "String":
		if d.peek() != '"' {
			return Value{}, invalidf("String must be a JSON string")
		}
		if d.cbor {
			if err := d.transcodeStr(); err != nil {
				return Value{}, err
			}
			v = Value{Kind: KindString}
			break
		}
		s, err := d.str()
		if err != nil {
			return Value{}, err
		}
		v = Value{Kind: KindString, Str: string(s)}
	case "Number":
		if v, err = d.number(); err != nil {
			return Value{}, err
		}
	case "Array":
		if d.peek() != '[' {
			return Value{}, invalidf("Array must be a JSON array")
		}
		if depth >= MaxDepth {
			return Value{}, errNesting
		}
		if v, err = d.array(depth + 1); err != nil {
			return Value{}, err
		}
	case "Object":
		if d.peek() != '{' {
			return Value{}, invalidf("Object must be a JSON object")
		}
		if depth >= MaxDepth {
			return Value{}, errNesting
		}
		if v, err = d.object(depth + 1); err != nil {
			return Value{}, err
		}
	default:
		return Value{}, invalidf("unknown variant %s", quoteSnippet(string(name)))
	}
	if d.cbor {
		switch v.Kind { // strings, arrays and objects were written as read
		case KindUndefined, KindNull, KindHole, KindBool, KindNumber:
			d.out = appendCBOR(d.out, &v)
		}
	}
	switch d.peek() {
	case '}':
		d.i++
		return v, nil
	case ',':
		return Value{}, invalidf("a variant object must have exactly one key")
	}
	return Value{}, d.expected("'}'")
}

const numberShapes = `Number must be "NaN", "Infinity", "NegInfinity", "NegZero" or {"Finite":number}`

func (d *jsonDecoder) number() (Value, error) {
	switch d.peek() {
	case '"':
		name, err := d.str()
		if err != nil {
			return Value{}, err
		}
		switch string(name) {
		case "NaN":
			return Value{Kind: KindNumber, Num: math.NaN()}, nil
		case "Infinity":
			return Value{Kind: KindNumber, Num: math.Inf(1)}, nil
		case "NegInfinity":
			return Value{Kind: KindNumber, Num: math.Inf(-1)}, nil
		case "NegZero":
			return Value{Kind: KindNumber, Num: math.Copysign(0, -1)}, nil
		}
		return Value{}, invalidf("unknown Number variant %s", quoteSnippet(string(name)))
	case '{':
		d.i++
		if d.peek() != '"' {
			return Value{}, invalidf(numberShapes)
		}
		name, err := d.str()
		if err != nil {
			return Value{}, err
		}
		if string(name) != "Finite" {
			return Value{}, invalidf("unknown Number variant %s", quoteSnippet(string(name)))
		}
		if err := d.expect(':', "':'"); err != nil {
			return Value{}, err
		}
		f, err := d.finite()
		if err != nil {
			return Value{}, err
		}
		switch d.peek() {
		case '}':
			d.i++
			return Value{Kind: KindNumber, Num: f}, nil
		case ',':
			return Value{}, invalidf(numberShapes)
		}
		return Value{}, d.expected("'}'")
	}
	return Value{}, invalidf(numberShapes)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// finite decodes a JSON number.
func (d *jsonDecoder) finite() (float64, error) {
	d.skipWS()
	b, start := d.b, d.i
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return 0, invalidf("Finite must be a JSON number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			d.i = i
			return 0, d.expected("a digit")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			d.i = i
			return 0, d.expected("a digit")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	d.i = i
	f, err := strconv.ParseFloat(string(b[start:i]), 64)
	if err != nil {
		return 0, invalidf("number out of range at offset %d", start)
	}
	return f, nil
}

// array decodes the elements of an array at nesting depth, after checking
// that d.b[d.i] is '['.
func (d *jsonDecoder) array(depth int) (Value, error) {
	d.i++
	head := -1
	if d.cbor {
		head = d.openHead(majorArray)
	}
	if d.peek() == ']' {
		d.i++
		return Value{Kind: KindArray}, nil
	}
	base := len(d.elems)
	n := 0
	for {
		if n == MaxArrayLength {
			return Value{}, errArrayTooLong
		}
		v, err := d.value(depth, posElem)
		if err != nil {
			return Value{}, err
		}
		if !d.cbor {
			d.elems = append(d.elems, v)
		}
		n++
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			if d.cbor {
				d.heads[head].n = uint64(n)
				return Value{Kind: KindArray}, nil
			}
			return Value{Kind: KindArray, Elems: d.takeElems(base)}, nil
		default:
			return Value{}, d.expected("',' or ']'")
		}
	}
}

// object decodes the members of an object at nesting depth, after checking
// that d.b[d.i] is '{'.
func (d *jsonDecoder) object(depth int) (Value, error) {
	d.i++
	head := -1
	if d.cbor {
		head = d.openHead(majorMap)
	}
	if d.peek() == '}' {
		d.i++
		return Value{Kind: KindObject}, nil
	}
	base := len(d.members)
	var keys keySet
	for {
		if d.peek() != '"' {
			return Value{}, d.expected("an object key")
		}
		kb, err := d.str()
		if err != nil {
			return Value{}, err
		}
		key := d.key(kb)
		if !keys.add(d.members[base:], key) {
			return Value{}, errDuplicateKey(key)
		}
		if d.cbor {
			d.out = detcbor.AppendHead(d.out, majorBytes, uint64(len(key)))
			d.out = append(d.out, key...)
		}
		if err := d.expect(':', "':'"); err != nil {
			return Value{}, err
		}
		v, err := d.value(depth, posMember)
		if err != nil {
			return Value{}, err
		}
		if d.cbor {
			v = Value{} // the keys alone find a repeated key
		}
		d.members = append(d.members, Member{Key: key, Value: v})
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			if d.cbor {
				d.heads[head].n = uint64(len(d.members) - base)
				clear(d.members[base:])
				d.members = d.members[:base]
				return Value{Kind: KindObject}, nil
			}
			return Value{Kind: KindObject, Members: d.takeMembers(base)}, nil
		default:
			return Value{}, d.expected("',' or '}'")
		}
	}
}

// str decodes the JSON string starting at d.b[d.i] == '"' to WTF-8. The
// result aliases the input or the scratch buffer, so it is valid only until
// the next call.
func (d *jsonDecoder) str() ([]byte, error) {
	b := d.b
	start := d.i + 1
	for i := start; i < len(b); {
		if i = jsonscan.PlainRun(b, i); i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			d.i = i + 1
			return b[start:i], nil
		case c == '\\' || c < 0x20:
			return d.strSlow(start, i)
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, invalidf("invalid UTF-8 in string at offset %d", i)
			}
			i += size
		}
	}
	return nil, invalidf("unterminated string at offset %d", d.i)
}

// transcodeStr writes the string at d.b[d.i] to out as a byte string,
// unescaped into place: its head goes first, with room for the longest
// the rest of the input allows, and moves the string only when the head
// turns out shorter (a short string followed by much input).
func (d *jsonDecoder) transcodeStr() error {
	at := len(d.out)
	room := headLen(uint64(len(d.b) - d.i))
	d.out = append(d.out, make([]byte, room)...)
	out, err := d.unescape(d.out, d.i+1)
	if err != nil {
		return err
	}
	n := len(out) - at - room
	if h := headLen(uint64(n)); h < room {
		copy(out[at+h:], out[at+room:])
		out = out[:len(out)-(room-h)]
	}
	detcbor.AppendHead(out[at:at], majorBytes, uint64(n))
	d.out = out
	return nil
}

// strSlow continues str from b[i], the first escape or control character.
func (d *jsonDecoder) strSlow(start, i int) ([]byte, error) {
	b := d.b
	// Unescaping only shrinks a string: room for the rest of its text is
	// room enough, and a long answer is not copied again each time an
	// append outgrows the buffer. The rest of the input bounds it without
	// a pass over the string; only past what the pool keeps is the
	// string's own end looked for (from quote to quote).
	if rest := len(b) - start; cap(d.buf) < rest {
		n := rest
		if n > maxPooledBuf {
			n = jsonscan.SkipString(b, start-1) - start
		}
		if cap(d.buf) < n {
			d.buf = make([]byte, 0, n)
		}
	}
	buf, err := d.unescape(append(d.buf[:0], b[start:i]...), i)
	if err != nil {
		return nil, err
	}
	d.buf = buf
	return buf, nil
}

// unescape appends the string whose text continues at d.b[i] to dst,
// unescaped, and moves d.i (still at its opening quote) past its closing
// quote. Past its first 64 bytes, most of a long string goes 64 bytes at
// a time (unescapeBlocks); before them, near its end, or where dst lacks
// room, text between escapes goes eight bytes at a time: each word is
// written whole where dst has room and kept up to its first byte that
// needs a look.
func (d *jsonDecoder) unescape(dst []byte, i int) ([]byte, error) {
	b := d.b
	for i < len(b) {
		if i-d.i > textBlock {
			// Only once the string is a block long: a short one with an
			// escape took 6-8 % longer for a block's look past its end.
			dst, i = unescapeBlocks(dst, b, i)
		}
		for len(b)-i >= 8 && cap(dst)-len(dst) >= 8 {
			x := binary.LittleEndian.Uint64(b[i:])
			n := len(dst)
			binary.LittleEndian.PutUint64(dst[n:n+8], x)
			m := jsonscan.Specials(x)
			if m == 0 {
				dst, i = dst[:n+8], i+8
				continue
			}
			k := bits.TrailingZeros64(m) / 8
			dst, i = dst[:n+k], i+k
			break
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			d.i = i + 1
			return dst, nil
		case c == '\\':
			if i+1 >= len(b) {
				return nil, invalidf("unterminated string at offset %d", d.i)
			}
			switch e := b[i+1]; e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				var ok bool
				if dst, i, ok = appendUEscape(dst, b, i); !ok {
					return nil, invalidf("invalid \\u escape at offset %d", i)
				}
				continue
			default:
				return nil, invalidf("invalid escape in string at offset %d", i)
			}
			i += 2
		case c < 0x20:
			return nil, invalidf("unescaped control character in string at offset %d", i)
		case c < utf8.RuneSelf:
			// Near the end of the input, or of dst's room.
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, invalidf("invalid UTF-8 in string at offset %d", i)
			}
			dst = append(dst, b[i:i+size]...)
			i += size
		}
	}
	return nil, invalidf("unterminated string at offset %d", d.i)
}

// appendUEscape appends what the \u escape at b[i] stands for to dst,
// with the low half of a surrogate pair that follows it, and returns dst
// and the index past what it read; false if b[i+2:] has no four hex
// digits.
func appendUEscape(dst, b []byte, i int) ([]byte, int, bool) {
	u, ok := hex4(b, i+2)
	if !ok {
		return dst, i, false
	}
	i += 6
	if u >= surrHighMin && u < surrLowMin && len(b)-i >= 6 && b[i] == '\\' && b[i+1] == 'u' {
		if lo, ok := hex4(b, i+2); ok && lo >= surrLowMin && lo <= surrMax {
			return utf8.AppendRune(dst, 0x10000+(rune(u-surrHighMin)<<10|rune(lo-surrLowMin))), i + 6, true
		}
	}
	return appendUnit(dst, u), i, true
}

// unescapeBlocks appends the text of b from i to dst, unescaped, 64 bytes
// at a time for as long as b and dst have room, and stops at the first
// byte it leaves to its caller: a quote, a control character, an invalid
// escape or UTF-8 sequence. It returns dst and where it stopped.
//
// A block's special bytes are found at once (jsonscan.SpecialsBlock) and
// walked bit by bit. The text before each escape is copied sixteen bytes
// at a time whatever its length, so that what the next escape costs does
// not hang on a branch on this one's: JSON text has an escape every dozen
// bytes, and a loop that looked at each word in turn mispredicted about
// every second one. A multi-byte sequence is checked and left in the text
// to copy.
func unescapeBlocks(dst, b []byte, i int) ([]byte, int) {
	const block, over = textBlock, textOver
	for len(b)-i >= block+over && cap(dst)-len(dst) >= block+over {
		in := b[i : i+block+over]
		n := len(dst)
		out := dst[n : n+block+over]
		m := jsonscan.SpecialsBlock(in)
		src, o := 0, 0 // in[src:p] is still to copy, to out[o:]
		for m != 0 {
			p := bits.TrailingZeros64(m)
			c := in[p]
			if c >= utf8.RuneSelf {
				r, size := utf8.DecodeRune(in[p:])
				if r == utf8.RuneError && size == 1 {
					return dst[:n+copyRun(out, o, in, src, p)], i + p
				}
				m &^= (1<<size - 1) << p
				if p+size > block {
					m, p = 0, p+size // the rest of the block, and this, are one run
					o = copyRun(out, o, in, src, p)
					src = p
				}
				continue
			}
			o = copyRun(out, o, in, src, p)
			if c != '\\' {
				return dst[:n+o], i + p
			}
			if u := simpleEscapes[in[p+1]]; u != 0 {
				out[o] = u
				o++
				src = p + 2
				m &^= 3 << p // the escaped byte is no special of its own
				continue
			}
			if in[p+1] != 'u' {
				return dst[:n+o], i + p
			}
			if u, ok := hex4(in, p+2); ok && (u < surrHighMin || u > surrMax) {
				// Not half a pair: the common case, without the call.
				o += len(appendUnit(out[o:o], u))
				src = p + 6
			} else {
				w, next, ok := appendUEscape(out[o:o], in, p)
				if !ok {
					return dst[:n+o], i + p
				}
				o += len(w)
				src = next
			}
			if src < block {
				m &= ^uint64(0) << src
			} else {
				m = 0
			}
		}
		if src < block {
			o = copyRun(out, o, in, src, block)
			src = block
		}
		dst, i = dst[:n+o], i+src
	}
	return dst, i
}

// copyRun copies in[src:end] to out[o:] sixteen bytes at a time, writing
// up to fifteen bytes past it, and returns the index in out past the copy.
func copyRun(out []byte, o int, in []byte, src, end int) int {
	for k := src; k < end; k += 16 {
		copy16(out[o+k-src:], in[k:])
	}
	return o + end - src
}

// copy16 copies the first sixteen bytes of src to dst.
func copy16(dst, src []byte) {
	binary.LittleEndian.PutUint64(dst[:8], binary.LittleEndian.Uint64(src[:8]))
	binary.LittleEndian.PutUint64(dst[8:16], binary.LittleEndian.Uint64(src[8:16]))
}

// simpleEscapes maps the letter of each one-letter escape to the byte it
// stands for, and every other byte to 0.
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func hex4(b []byte, i int) (uint16, bool) {
	if len(b)-i < 4 {
		return 0, false
	}
	p := b[i : i+4]
	v := hexValues[p[0]]<<12 | hexValues[p[1]]<<8 | hexValues[p[2]]<<4 | hexValues[p[3]]
	return uint16(v), v>>16 == 0
}

// hexValues is the value of each hex digit, and for any other byte a bit
// above the sixteen four digits make, wherever hex4 shifts it.
var hexValues = func() (t [256]uint32) {
	for c := range t {
		switch {
		case c >= '0' && c <= '9':
			t[c] = uint32(c - '0')
		case c >= 'a' && c <= 'f':
			t[c] = uint32(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			t[c] = uint32(c - 'A' + 10)
		default:
			t[c] = 1 << 16
		}
	}
	return t
}()

// appendUnit appends a BMP code unit as UTF-8, an unpaired surrogate as
// its 3-byte generalized form.
func appendUnit(buf []byte, u uint16) []byte {
	switch {
	case u < 0x80:
		return append(buf, byte(u))
	case u < 0x800:
		return append(buf, 0xC0|byte(u>>6), 0x80|byte(u)&0x3F)
	}
	return append(buf, 0xE0|byte(u>>12), 0x80|byte(u>>6)&0x3F, 0x80|byte(u)&0x3F)
}
