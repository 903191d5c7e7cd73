package goja

import (
	"math"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"

	// mustard(strings): parser is no longer imported here
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

func (r *Runtime) collator() *collate.Collator {
	collator := r._collator
	if collator == nil {
		collator = collate.New(language.Und)
		r._collator = collator
	}
	return collator
}

func toString(arg Value) String {
	if s, ok := arg.(String); ok {
		return s
	}
	if s, ok := arg.(*Symbol); ok {
		return s.descriptiveString()
	}
	return arg.toString()
}

func (r *Runtime) builtin_String(call FunctionCall) Value {
	if len(call.Arguments) > 0 {
		if _, sym := call.Arguments[0].(*Symbol); !sym {
			return r.stringOf(call.Arguments[0]) // mustard(strings): a BigInt's conversion charged
		}
		s := toString(call.Arguments[0])
		r.made(stringBytes(s)) // mustard(strings): a symbol's description copied
		return s
	} else {
		return stringEmpty
	}
}

func (r *Runtime) _newString(s String, proto *Object) *Object {
	v := &Object{runtime: r}

	o := &stringObject{}
	o.class = classString
	o.val = v
	o.extensible = true
	v.self = o
	o.prototype = proto
	if s != nil {
		o.value = s
	}
	o.init()
	return v
}

func (r *Runtime) builtin_newString(args []Value, proto *Object) *Object {
	var s String
	if len(args) > 0 {
		s = r.stringOf(args[0]) // mustard(bignum): a BigInt's conversion charged
	} else {
		s = stringEmpty
	}
	return r._newString(s, proto)
}

func (r *Runtime) stringproto_toStringValueOf(this Value, funcName string) Value {
	if str, ok := this.(String); ok {
		return str
	}
	if obj, ok := this.(*Object); ok {
		if strObj, ok := obj.self.(*stringObject); ok {
			return strObj.value
		}
		if reflectObj, ok := obj.self.(*objectGoReflect); ok && reflectObj.class == classString {
			if toString := reflectObj.toString; toString != nil {
				return toString()
			}
			if valueOf := reflectObj.valueOf; valueOf != nil {
				return valueOf()
			}
		}
		if obj == r.global.StringPrototype {
			return stringEmpty
		}
	}
	r.typeErrorResult(true, "String.prototype.%s is called on incompatible receiver", funcName)
	return nil
}

func (r *Runtime) stringproto_toString(call FunctionCall) Value {
	return r.stringproto_toStringValueOf(call.This, "toString")
}

func (r *Runtime) stringproto_valueOf(call FunctionCall) Value {
	return r.stringproto_toStringValueOf(call.This, "valueOf")
}

func (r *Runtime) stringproto_iterator(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	return r.createStringIterator(r.stringOf(call.This)) // mustard(bignum): a BigInt's conversion charged
}

func (r *Runtime) string_fromcharcode(call FunctionCall) Value {
	r.transform(int64(len(call.Arguments)), true) // mustard(strings): a unit and a byte a code
	b := make([]byte, len(call.Arguments))
	for i, arg := range call.Arguments {
		r.poll(i) // mustard(meter)
		chr := toUint16(arg)
		if chr >= utf8.RuneSelf {
			r.allocBytes(unitBytes(int64(len(call.Arguments)), false)) // mustard(strings): the UTF-16 copy
			bb := make([]uint16, len(call.Arguments)+1)
			bb[0] = unistring.BOM
			bb1 := bb[1:]
			for j := 0; j < i; j++ {
				bb1[j] = uint16(b[j])
			}
			bb1[i] = chr
			i++
			for j, arg := range call.Arguments[i:] {
				r.poll(j) // mustard(meter)
				bb1[i+j] = toUint16(arg)
			}
			return unicodeString(bb)
		}
		b[i] = byte(chr)
	}

	return asciiString(b)
}

func (r *Runtime) string_fromcodepoint(call FunctionCall) Value {
	r.transform(int64(len(call.Arguments)), false) // mustard(strings): a code point is one unit or two
	var sb StringBuilder
	for i, arg := range call.Arguments {
		r.poll(i) // mustard(strings)
		num := arg.ToNumber()
		var c rune
		if numInt, ok := num.(valueInt); ok {
			if numInt < 0 || numInt > utf8.MaxRune {
				panic(r.newErrorf(r.getRangeError(), "Invalid code point %d", numInt))
			}
			c = rune(numInt)
		} else {
			panic(r.newErrorf(r.getRangeError(), "Invalid code point %s", num))
		}
		sb.WriteRune(c)
	}
	return sb.String()
}

func (r *Runtime) string_raw(call FunctionCall) Value {
	cooked := call.Argument(0).ToObject(r)
	raw := nilSafe(cooked.self.getStr("raw", nil)).ToObject(r)
	literalSegments := toLength(raw.self.getStr("length", nil))
	if literalSegments <= 0 {
		return stringEmpty
	}
	var stringElements StringBuilder
	nextIndex := int64(0)
	numberOfSubstitutions := int64(len(call.Arguments) - 1)
	for {
		r.tick(int(nextIndex)) // mustard(strings): raw.length is the guest's
		// mustard(strings): a BigInt's conversion charged (stringOf), here and below
		nextSeg := r.stringOf(nilSafe(raw.self.getIdx(valueInt(nextIndex), nil)))
		r.produce(stringBytes(nextSeg)) // mustard(strings)
		stringElements.WriteString(nextSeg)
		if nextIndex+1 == literalSegments {
			return stringElements.String()
		}
		if nextIndex < numberOfSubstitutions {
			sub := r.stringOf(nilSafe(call.Arguments[nextIndex+1]))
			r.produce(stringBytes(sub)) // mustard(bignum)
			stringElements.WriteString(sub)
		}
		nextIndex++
	}
}

func (r *Runtime) stringproto_at(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This)                    // mustard(sweep-charges): a BigInt's conversion charged
	pos := r.numArg(call.Argument(0)).ToInteger() // mustard(sweep-charges): a long string argument's conversion charged
	length := int64(s.Length())
	if pos < 0 {
		pos = length + pos
	}
	if pos >= length || pos < 0 {
		return _undefined
	}
	return s.Substring(int(pos), int(pos+1))
}

func (r *Runtime) stringproto_charAt(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This)                    // mustard(sweep-charges): a BigInt's conversion charged
	pos := r.numArg(call.Argument(0)).ToInteger() // mustard(sweep-charges): a long string argument's conversion charged
	if pos < 0 || pos >= int64(s.Length()) {
		return stringEmpty
	}
	return s.Substring(int(pos), int(pos+1))
}

func (r *Runtime) stringproto_charCodeAt(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This)                    // mustard(sweep-charges): a BigInt's conversion charged
	pos := r.numArg(call.Argument(0)).ToInteger() // mustard(sweep-charges): a long string argument's conversion charged
	if pos < 0 || pos >= int64(s.Length()) {
		return _NaN
	}
	return intToValue(int64(s.CharAt(toIntStrict(pos)) & 0xFFFF))
}

func (r *Runtime) stringproto_codePointAt(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This)                  // mustard(sweep-charges): a BigInt's conversion charged
	p := r.numArg(call.Argument(0)).ToInteger() // mustard(sweep-charges): a long string argument's conversion charged
	size := s.Length()
	if p < 0 || p >= int64(size) {
		return _undefined
	}
	pos := toIntStrict(p)
	first := s.CharAt(pos)
	if isUTF16FirstSurrogate(first) {
		pos++
		if pos < size {
			second := s.CharAt(pos)
			if isUTF16SecondSurrogate(second) {
				return intToValue(int64(utf16.DecodeRune(rune(first), rune(second))))
			}
		}
	}
	return intToValue(int64(first & 0xFFFF))
}

func (r *Runtime) stringproto_concat(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	strs := make([]String, len(call.Arguments)+1)
	a, u := devirtualizeString(r.stringOf(call.This)) // mustard(bignum): a BigInt's conversion charged
	allAscii := true
	totalLen := 0
	if u == nil {
		strs[0] = a
		totalLen = len(a)
	} else {
		strs[0] = u
		totalLen = u.Length()
		allAscii = false
	}
	for i, arg := range call.Arguments {
		r.poll(i)                                   // mustard(bignum)
		a, u := devirtualizeString(r.stringOf(arg)) // mustard(bignum): a BigInt's conversion charged
		if u != nil {
			allAscii = false
			totalLen += u.Length()
			strs[i+1] = u
		} else {
			totalLen += a.Length()
			strs[i+1] = a
		}
	}

	r.produce(unitBytes(int64(totalLen), allAscii)) // mustard(strings)
	if allAscii {
		var buf strings.Builder
		buf.Grow(totalLen)
		for _, s := range strs {
			buf.WriteString(s.String())
		}
		return asciiString(buf.String())
	} else {
		buf := make([]uint16, totalLen+1)
		buf[0] = unistring.BOM
		pos := 1
		for _, s := range strs {
			switch s := s.(type) {
			case asciiString:
				for i := 0; i < len(s); i++ {
					buf[pos] = uint16(s[i])
					pos++
				}
			case unicodeString:
				copy(buf[pos:], s[1:])
				pos += s.Length()
			}
		}
		return unicodeString(buf)
	}
}

func (r *Runtime) stringproto_endsWith(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged
	searchString := call.Argument(0)
	if isRegexp(searchString) {
		panic(r.NewTypeError("First argument to String.prototype.endsWith must not be a regular expression"))
	}
	searchStr := r.stringOf(searchString) // mustard(bignum): a BigInt's conversion charged
	l := int64(s.Length())
	var pos int64
	if posArg := call.Argument(1); posArg != _undefined {
		pos = posArg.ToInteger()
	} else {
		pos = l
	}
	end := toIntStrict(min(max(pos, 0), l))
	searchLength := searchStr.Length()
	start := end - searchLength
	if start < 0 {
		return valueFalse
	}
	for i := 0; i < searchLength; i++ {
		r.poll(i) // mustard(meter)
		if s.CharAt(start+i) != searchStr.CharAt(i) {
			r.searched(0, i) // mustard(strings)
			return valueFalse
		}
	}
	r.searched(0, searchLength) // mustard(strings)
	return valueTrue
}

func (r *Runtime) stringproto_includes(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged
	searchString := call.Argument(0)
	if isRegexp(searchString) {
		panic(r.NewTypeError("First argument to String.prototype.includes must not be a regular expression"))
	}
	searchStr := r.stringOf(searchString) // mustard(bignum): a BigInt's conversion charged
	var pos int64
	if posArg := call.Argument(1); posArg != _undefined {
		pos = posArg.ToInteger()
	} else {
		pos = 0
	}
	start := toIntStrict(min(max(pos, 0), int64(s.Length())))
	idx := s.index(searchStr, start)
	r.searched(start, foundEnd(idx, searchStr.Length(), s.Length())) // mustard(strings)
	if idx != -1 {
		return valueTrue
	}
	return valueFalse
}

func (r *Runtime) stringproto_indexOf(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	value := r.stringOf(call.This)                           // mustard(sweep-charges): a BigInt's conversion charged
	target := r.stringOf(call.Argument(0))                   // mustard(sweep-charges): a BigInt's conversion charged
	pos := r.numArg(call.Argument(1)).ToNumber().ToInteger() // mustard(sweep-charges): a long string argument's conversion charged

	if pos < 0 {
		pos = 0
	} else {
		l := int64(value.Length())
		if pos > l {
			pos = l
		}
	}

	idx := value.index(target, toIntStrict(pos))
	r.searched(int(pos), foundEnd(idx, target.Length(), value.Length())) // mustard(strings)
	return intToValue(int64(idx))
}

func (r *Runtime) stringproto_lastIndexOf(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	value := r.stringOf(call.This)                  // mustard(sweep-charges): a BigInt's conversion charged
	target := r.stringOf(call.Argument(0))          // mustard(sweep-charges): a BigInt's conversion charged
	numPos := r.numArg(call.Argument(1)).ToNumber() // mustard(sweep-charges): a long string argument's conversion charged

	var pos int64
	if f, ok := numPos.(valueFloat); ok && math.IsNaN(float64(f)) {
		pos = int64(value.Length())
	} else {
		pos = numPos.ToInteger()
		if pos < 0 {
			pos = 0
		} else {
			l := int64(value.Length())
			if pos > l {
				pos = l
			}
		}
	}

	idx := value.lastIndex(target, toIntStrict(pos))
	r.searched(max(idx, 0), min(int(pos)+target.Length(), value.Length())) // mustard(strings): scanned backwards
	return intToValue(int64(idx))
}

func (r *Runtime) stringproto_localeCompare(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	thisStr := r.stringOf(call.This)        // mustard(strings): a BigInt's conversion charged
	thatStr := r.stringOf(call.Argument(0)) // mustard(strings): a BigInt's conversion charged
	if r.metered() {                        // mustard(strings)
		r.work(collateWork(thisStr) + collateWork(thatStr))
	}
	return intToValue(int64(r.localeCompare(thisStr, thatStr))) // mustard(strings): interruptible
}

func (r *Runtime) stringproto_match(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	regexp := call.Argument(0)
	if _, ok := regexp.(*Object); ok {
		if matcher := toMethod(r.getV(regexp, SymMatch)); matcher != nil {
			return matcher(FunctionCall{
				This:      regexp,
				Arguments: []Value{call.This},
			})
		}
	}

	var rx *regexpObject
	if regexp, ok := regexp.(*Object); ok {
		rx, _ = regexp.self.(*regexpObject)
	}

	if rx == nil {
		rx = r.newRegExp(regexp, nil, r.getRegExpPrototype())
	}

	if matcher, ok := r.toObject(rx.getSym(SymMatch, nil)).self.assertCallable(); ok {
		return matcher(FunctionCall{
			This:      rx.val,
			Arguments: []Value{r.stringOf(call.This)}, // mustard(bignum): a BigInt's conversion charged
		})
	}

	panic(r.NewTypeError("RegExp matcher is not a function"))
}

func (r *Runtime) stringproto_matchAll(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	regexp := call.Argument(0)
	if o, ok := regexp.(*Object); ok {
		if isRegexp(regexp) {
			flags := nilSafe(o.self.getStr("flags", nil))
			r.checkObjectCoercible(flags)
			flagsStr := r.stringOf(flags).String() // mustard(strings): a BigInt's conversion charged
			r.work(len(flagsStr))                  // mustard(strings): the guest's string
			if !strings.Contains(flagsStr, "g") {
				panic(r.NewTypeError("RegExp doesn't have global flag set"))
			}
		}
		if matcher := toMethod(r.getV(regexp, SymMatchAll)); matcher != nil {
			return matcher(FunctionCall{
				This:      regexp,
				Arguments: []Value{call.This},
			})
		}
	}

	rx := r.newRegExp(regexp, asciiString("g"), r.getRegExpPrototype())

	if matcher, ok := r.toObject(rx.getSym(SymMatchAll, nil)).self.assertCallable(); ok {
		return matcher(FunctionCall{
			This:      rx.val,
			Arguments: []Value{r.stringOf(call.This)}, // mustard(bignum): a BigInt's conversion charged
		})
	}

	panic(r.NewTypeError("RegExp matcher is not a function"))
}

func (r *Runtime) stringproto_normalize(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged
	var form string
	if formArg := call.Argument(0); formArg != _undefined {
		form = r.stringOf(formArg).toString().String() // mustard(strings): a BigInt's conversion charged
		r.work(len(form))                              // mustard(strings): the guest's string
	} else {
		form = "NFC"
	}
	var f norm.Form
	switch form {
	case "NFC":
		f = norm.NFC
	case "NFD":
		f = norm.NFD
	case "NFKC":
		f = norm.NFKC
	case "NFKD":
		f = norm.NFKD
	default:
		panic(r.newError(r.getRangeError(), "The normalization form should be one of NFC, NFD, NFKC, NFKD"))
	}

	switch s := s.(type) {
	case asciiString:
		return s
	case unicodeString:
		r.transformAt(int64(s.Length()), false, normalizeUnits)                                                                                 // mustard(strings)
		return r.expanded(r.longString(s.Length(), func() String { return transformString(s, f.String) }), unitBytes(int64(s.Length()), false)) // mustard(strings): lone surrogates kept, interruptible
	case *importedString:
		if s.scanned && s.u == nil {
			return asciiString(s.s)
		}
		r.transformAt(int64(len(s.s)), false, normalizeUnits)                                                                                // mustard(strings)
		return r.expanded(r.longString(len(s.s), func() String { return newStringValue(f.String(s.s)) }), unitBytes(int64(len(s.s)), false)) // mustard(strings): interruptible
	default:
		panic(unknownStringTypeErr(s))
	}
}

func (r *Runtime) _stringPad(call FunctionCall, start bool) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged
	maxLength := toLength(call.Argument(0))
	stringLength := int64(s.Length())
	if maxLength <= stringLength {
		return s
	}
	strAscii, strUnicode := devirtualizeString(s)
	var filler String
	var fillerAscii asciiString
	var fillerUnicode unicodeString
	if fillString := call.Argument(1); fillString != _undefined {
		filler = r.stringOf(fillString) // mustard(bignum): a BigInt's conversion charged
		if filler.Length() == 0 {
			return s
		}
		fillerAscii, fillerUnicode = devirtualizeString(filler)
	} else {
		fillerAscii = " "
		filler = fillerAscii
	}
	remaining := toIntStrict(maxLength - stringLength)
	r.produce(unitBytes(maxLength, fillerUnicode == nil && strUnicode == nil)) // mustard(strings)
	r.work(remaining / filler.Length())                                        // mustard(strings): a unit a copy of the filler
	if fillerUnicode == nil && strUnicode == nil {
		fl := fillerAscii.Length()
		var sb strings.Builder
		sb.Grow(toIntStrict(maxLength))
		if !start {
			sb.WriteString(string(strAscii))
		}
		for i := 0; remaining >= fl; i++ {
			r.poll(i) // mustard(strings)
			sb.WriteString(string(fillerAscii))
			remaining -= fl
		}
		if remaining > 0 {
			sb.WriteString(string(fillerAscii[:remaining]))
		}
		if start {
			sb.WriteString(string(strAscii))
		}
		return asciiString(sb.String())
	}
	var sb unicodeStringBuilder
	sb.Grow(toIntStrict(maxLength))
	if !start {
		sb.writeString(s)
	}
	fl := filler.Length()
	for i := 0; remaining >= fl; i++ {
		r.poll(i) // mustard(strings)
		sb.writeString(filler)
		remaining -= fl
	}
	if remaining > 0 {
		sb.writeString(filler.Substring(0, remaining))
	}
	if start {
		sb.writeString(s)
	}

	return sb.String()
}

func (r *Runtime) stringproto_padEnd(call FunctionCall) Value {
	return r._stringPad(call, false)
}

func (r *Runtime) stringproto_padStart(call FunctionCall) Value {
	return r._stringPad(call, true)
}

func (r *Runtime) stringproto_repeat(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This)                 // mustard(sweep-charges): a BigInt's conversion charged
	n := r.numArg(call.Argument(0)).ToNumber() // mustard(sweep-charges): a long string argument's conversion charged
	if n == _positiveInf {
		panic(r.newError(r.getRangeError(), "Invalid count value"))
	}
	numInt := n.ToInteger()
	if numInt < 0 {
		panic(r.newError(r.getRangeError(), "Invalid count value"))
	}
	if numInt == 0 || s.Length() == 0 {
		return stringEmpty
	}
	num := toIntStrict(numInt)
	a, u := devirtualizeString(s)
	r.produce(unitBytes(int64(mulBytes(int64(s.Length()), numInt)), u == nil)) // mustard(strings): before the Grow
	r.work(num)                                                                // mustard(strings): a unit a copy
	if u == nil {
		var sb strings.Builder
		sb.Grow(len(a) * num)
		for i := 0; i < num; i++ {
			r.poll(i) // mustard(meter)
			sb.WriteString(string(a))
		}
		return asciiString(sb.String())
	}

	var sb unicodeStringBuilder
	sb.Grow(u.Length() * num)
	for i := 0; i < num; i++ {
		r.poll(i) // mustard(meter)
		sb.writeUnicodeString(u)
	}
	return sb.String()
}

func getReplaceValue(replaceValue Value) (str String, rcall func(FunctionCall) Value) {
	if replaceValue, ok := replaceValue.(*Object); ok {
		if c, ok := replaceValue.self.assertCallable(); ok {
			rcall = c
			return
		}
	}
	str = replaceValue.toString()
	return
}

func (r *Runtime) stringReplace(s String, found []regexpResult, newstring String, rcall func(FunctionCall) Value) Value {
	if len(found) == 0 {
		return s
	}

	a, u := devirtualizeString(s)

	var buf StringBuilder

	lastIndex := 0
	lengthS := s.Length()
	if rcall != nil {
		for _, item := range found {
			if item.indexes[0] != lastIndex {
				r.produce(unitBytes(int64(item.indexes[0]-lastIndex), u == nil)) // mustard(strings)
				buf.WriteSubstring(s, lastIndex, item.indexes[0])
			}
			matchCount := len(item.indexes) / 2
			r.alloc((matchCount + 3) * valueBytes) // mustard(meter): the arguments
			argumentList := make([]Value, matchCount+2, matchCount+3)
			for index := 0; index < matchCount; index++ {
				offset := 2 * index
				if item.indexes[offset] != -1 {
					r.produce(substringBytes(s, item.indexes[offset+1]-item.indexes[offset])) // mustard(strings)
					if u == nil {
						argumentList[index] = a.Substring(item.indexes[offset], item.indexes[offset+1]) // mustard(substrings): of its own
					} else {
						argumentList[index] = u.Substring(item.indexes[offset], item.indexes[offset+1])
					}
				} else {
					argumentList[index] = _undefined
				}
			}
			argumentList[matchCount] = intToValue(int64(item.indexes[0]))
			argumentList[matchCount+1] = s
			groups := r.createRegexpGroupsObj(argumentList[:matchCount], item.groups)
			if groups != nil {
				argumentList = append(argumentList, groups)
			}
			replacement := rcall(FunctionCall{
				This:      _undefined,
				Arguments: argumentList,
			}).toString()
			r.produce(stringBytes(replacement)) // mustard(strings)
			buf.WriteString(replacement)
			lastIndex = item.indexes[1]
		}
	} else {
		for i, item := range found {
			r.poll(i) // mustard(strings)
			if item.indexes[0] != lastIndex {
				r.produce(unitBytes(int64(item.indexes[0]-lastIndex), u == nil)) // mustard(strings)
				// mustard(substrings): written from s, no piece copied first
				buf.WriteSubstring(s, lastIndex, item.indexes[0])
			}
			matchCount := len(item.indexes) / 2
			var namedGroups map[unistring.String]int
			r.writeSubstitution(s, item.indexes[0], matchCount, func(idx int) String { // mustard(strings)
				if item.indexes[idx*2] != -1 {
					if u == nil {
						return a[item.indexes[idx*2]:item.indexes[idx*2+1]]
					}
					return u.Substring(item.indexes[idx*2], item.indexes[idx*2+1])
				}
				return stringEmpty
			}, func(ref String) String {
				if namedGroups == nil {
					namedGroups = createRegexpGroupsMap(item)
				}
				if len(namedGroups) == 0 {
					return nil
				}
				if idx, exists := namedGroups[ref.string()]; exists {
					if item.indexes[idx] != -1 {
						if u == nil {
							return a[item.indexes[idx]:item.indexes[idx+1]]
						}
						return u.Substring(item.indexes[idx], item.indexes[idx+1])
					}
				}
				return stringEmpty
			}, newstring, &buf)
			lastIndex = item.indexes[1]
		}
	}

	if lastIndex != lengthS {
		r.produce(unitBytes(int64(lengthS-lastIndex), u == nil)) // mustard(strings)
		// mustard(substrings): written from s, no piece copied first
		buf.WriteSubstring(s, lastIndex, lengthS)
	}

	return buf.String()
}

func (r *Runtime) stringproto_replace(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	searchValue := call.Argument(0)
	replaceValue := call.Argument(1)
	if _, ok := searchValue.(*Object); ok {
		if replacer := toMethod(r.getV(searchValue, SymReplace)); replacer != nil {
			return replacer(FunctionCall{
				This:      searchValue,
				Arguments: []Value{call.This, replaceValue},
			})
		}
	}

	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged
	var found []regexpResult
	searchStr := r.stringOf(searchValue) // mustard(bignum): a BigInt's conversion charged
	pos := s.index(searchStr, 0)
	r.searched(0, foundEnd(pos, searchStr.Length(), s.Length())) // mustard(strings)
	if pos != -1 {
		found = append(found, regexpResult{indexes: []int{pos, pos + searchStr.Length()}})
	}

	str, rcall := getReplaceValue(replaceValue)
	return r.stringReplace(s, found, str, rcall)
}

func (r *Runtime) stringproto_replaceAll(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	searchValue := call.Argument(0)
	replaceValue := call.Argument(1)
	if o, ok := searchValue.(*Object); ok {
		if isRegexp(searchValue) {
			flags := nilSafe(o.self.getStr("flags", nil))
			r.checkObjectCoercible(flags)
			flagsStr := r.stringOf(flags).String() // mustard(strings): a BigInt's conversion charged
			r.work(len(flagsStr))                  // mustard(strings): the guest's string
			if !strings.Contains(flagsStr, "g") {
				panic(r.NewTypeError("String.prototype.replaceAll called with a non-global RegExp argument"))
			}
		}
		if replacer := toMethod(r.getV(searchValue, SymReplace)); replacer != nil {
			return replacer(FunctionCall{
				This:      searchValue,
				Arguments: []Value{call.This, replaceValue},
			})
		}
	}

	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged
	var found []regexpResult
	searchStr := r.stringOf(searchValue) // mustard(bignum): a BigInt's conversion charged
	searchLength := searchStr.Length()
	advanceBy := toIntStrict(max(1, int64(searchLength)))

	r.searched(0, s.Length()) // mustard(strings): the searches scan all of s
	pos := s.index(searchStr, 0)
	for pos != -1 {
		r.poll(len(found))  // mustard(strings)
		r.alloc(matchBytes) // mustard(strings)
		found = append(found, regexpResult{indexes: []int{pos, pos + searchLength}})
		pos = s.index(searchStr, pos+advanceBy)
	}

	str, rcall := getReplaceValue(replaceValue)
	return r.stringReplace(s, found, str, rcall)
}

func (r *Runtime) stringproto_search(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	regexp := call.Argument(0)
	if _, ok := regexp.(*Object); ok {
		if searcher := toMethod(r.getV(regexp, SymSearch)); searcher != nil {
			return searcher(FunctionCall{
				This:      regexp,
				Arguments: []Value{call.This},
			})
		}
	}

	var rx *regexpObject
	if regexp, ok := regexp.(*Object); ok {
		rx, _ = regexp.self.(*regexpObject)
	}

	if rx == nil {
		rx = r.newRegExp(regexp, nil, r.getRegExpPrototype())
	}

	if searcher, ok := r.toObject(rx.getSym(SymSearch, nil)).self.assertCallable(); ok {
		return searcher(FunctionCall{
			This:      rx.val,
			Arguments: []Value{r.stringOf(call.This)}, // mustard(bignum): a BigInt's conversion charged
		})
	}

	panic(r.NewTypeError("RegExp searcher is not a function"))
}

func (r *Runtime) stringproto_slice(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged

	l := int64(s.Length())
	start := r.numArg(call.Argument(0)).ToInteger() // mustard(sweep-charges): a long string argument's conversion charged
	var end int64
	if arg1 := call.Argument(1); arg1 != _undefined {
		end = arg1.ToInteger()
	} else {
		end = l
	}

	if start < 0 {
		start += l
		if start < 0 {
			start = 0
		}
	} else {
		if start > l {
			start = l
		}
	}

	if end < 0 {
		end += l
		if end < 0 {
			end = 0
		}
	} else {
		if end > l {
			end = l
		}
	}

	if end > start {
		r.produce(substringBytes(s, int(end-start))) // mustard(strings)
		return s.Substring(int(start), int(end))
	}
	return stringEmpty
}

func (r *Runtime) stringproto_split(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	separatorValue := call.Argument(0)
	limitValue := call.Argument(1)
	if _, ok := separatorValue.(*Object); ok {
		if splitter := toMethod(r.getV(separatorValue, SymSplit)); splitter != nil {
			return splitter(FunctionCall{
				This:      separatorValue,
				Arguments: []Value{call.This, limitValue},
			})
		}
	}
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged

	limit := -1
	if limitValue != _undefined {
		limit = int(toUint32(limitValue))
	}

	separatorValue = separatorValue.ToString()

	if limit == 0 {
		return r.newArrayValues(nil)
	}

	if separatorValue == _undefined {
		return r.newArrayValues([]Value{s})
	}

	var valueArray []Value
	sa, su := devirtualizeString(s)
	sepa, sepu := devirtualizeString(r.stringOf(separatorValue)) // mustard(strings): a BigInt's conversion charged
	if su == nil {                                               // ASCII string
		if sepu == nil {
			// Both are ASCII
			splitLimit := limit
			if limit > 0 {
				splitLimit = limit + 1
			}

			if r.metered() { // mustard(strings): the slots, then the pieces below
				n := strings.Count(string(sa), string(sepa)) + 1
				if limit > 0 {
					n = min(n, limit)
				}
				r.work(len(sa))
				r.alloc(mulBytes(int64(n), 3*valueBytes))
			}
			split := strings.SplitN(string(sa), string(sepa), splitLimit)

			if limit > 0 && len(split) > limit {
				split = split[:limit]
			}
			if r.metered() { // mustard(substrings): the pieces are copies
				n := 0
				for _, value := range split {
					n = addBytes(n, asciiPieceBytes(sa, len(value)))
				}
				r.produce(n)
			}
			valueArray = make([]Value, len(split))
			for index, value := range split {
				valueArray[index] = ownPiece(sa, value) // mustard(substrings): of its own
			}
		} else {
			// Unicode separator will never match an ASCII string
			return r.newArrayValues([]Value{s})
		}
	} else {
		var ss []uint16
		if sepu != nil {
			ss = sepu[1:]
		} else {
			ss = sepa.utf16()
		}
		su = su[1:]
		r.work(len(su)) // mustard(strings)
		if len(ss) > 0 {
			idx := utf16Index(su, ss)
			if idx == -1 {
				// Shortcut to avoid creating a copy of s
				return r.newArrayValues([]Value{s})
			}
			if limit < 0 {
				limit = min(math.MaxInt, math.MaxUint32)
			}
			for ; limit > 0; limit-- {
				r.alloc(addBytes(2*valueBytes, unitBytes(int64(idx), false))) // mustard(strings)
				var sb strings.Builder
				for i := range idx {
					r.poll(i) // mustard(meter)
					if su[i] >= utf8.RuneSelf {
						chunk := make(unicodeString, idx+1)
						chunk[0] = unistring.BOM
						copy(chunk[1:], su[:idx])
						valueArray = append(valueArray, chunk)
						goto next
					}
				}
				sb.Grow(idx)
				for i := range idx {
					r.poll(i) // mustard(meter)
					sb.WriteByte((byte)(su[i]))
				}
				valueArray = append(valueArray, asciiString(sb.String()))
			next:
				if idx == len(su) {
					break
				}
				su = su[idx+len(ss):]
				idx = utf16Index(su, ss)
				if idx == -1 {
					idx = len(su)
				}
			}
		} else {
			if limit > 0 && len(su) > limit {
				su = su[:limit]
			}
			r.alloc(mulBytes(int64(len(su)), 3*valueBytes)) // mustard(strings): a string a unit
			for i := 0; len(su) > 0; i++ {
				r.poll(i) // mustard(strings)
				c := su[0]
				if c >= utf8.RuneSelf {
					chunk := unicodeString{unistring.BOM, c}
					valueArray = append(valueArray, chunk)
				} else {
					valueArray = append(valueArray, asciiString(rune(c)))
				}
				su = su[1:]
			}
		}
	}

	return r.newArrayValues(valueArray)
}

func (r *Runtime) stringproto_startsWith(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged
	searchString := call.Argument(0)
	if isRegexp(searchString) {
		panic(r.NewTypeError("First argument to String.prototype.startsWith must not be a regular expression"))
	}
	searchStr := r.stringOf(searchString) // mustard(bignum): a BigInt's conversion charged
	l := int64(s.Length())
	var pos int64
	if posArg := call.Argument(1); posArg != _undefined {
		pos = posArg.ToInteger()
	}
	start := toIntStrict(min(max(pos, 0), l))
	searchLength := searchStr.Length()
	if int64(searchLength+start) > l {
		return valueFalse
	}
	for i := 0; i < searchLength; i++ {
		r.poll(i) // mustard(meter)
		if s.CharAt(start+i) != searchStr.CharAt(i) {
			r.searched(0, i) // mustard(strings)
			return valueFalse
		}
	}
	r.searched(0, searchLength) // mustard(strings)
	return valueTrue
}

func (r *Runtime) stringproto_substring(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged

	l := int64(s.Length())
	intStart := r.numArg(call.Argument(0)).ToInteger() // mustard(sweep-charges): a long string argument's conversion charged
	var intEnd int64
	if end := call.Argument(1); end != _undefined {
		intEnd = end.ToInteger()
	} else {
		intEnd = l
	}
	if intStart < 0 {
		intStart = 0
	} else if intStart > l {
		intStart = l
	}

	if intEnd < 0 {
		intEnd = 0
	} else if intEnd > l {
		intEnd = l
	}

	if intStart > intEnd {
		intStart, intEnd = intEnd, intStart
	}

	r.produce(substringBytes(s, int(intEnd-intStart))) // mustard(strings)
	return s.Substring(int(intStart), int(intEnd))
}

func (r *Runtime) stringproto_toLowerCase(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged

	r.transformAt(int64(s.Length()), isASCIIKind(s), caseMapUnits)                                       // mustard(strings)
	return r.expanded(r.longString(s.Length(), s.toLower), unitBytes(int64(s.Length()), isASCIIKind(s))) // mustard(strings): interruptible
}

func (r *Runtime) stringproto_toUpperCase(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged

	r.transformAt(int64(s.Length()), isASCIIKind(s), caseMapUnits)                                       // mustard(strings)
	return r.expanded(r.longString(s.Length(), s.toUpper), unitBytes(int64(s.Length()), isASCIIKind(s))) // mustard(strings): interruptible
}

func (r *Runtime) stringproto_trim(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged

	r.scanCopy(s)                     // mustard(surrogates)
	return r.trimUnits(s, true, true) // mustard(surrogates): lone surrogates kept
}

func (r *Runtime) stringproto_trimEnd(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged

	r.scanCopy(s)                      // mustard(surrogates)
	return r.trimUnits(s, false, true) // mustard(surrogates): lone surrogates kept
}

func (r *Runtime) stringproto_trimStart(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This) // mustard(bignum): a BigInt's conversion charged

	r.scanCopy(s)                      // mustard(surrogates)
	return r.trimUnits(s, true, false) // mustard(surrogates): lone surrogates kept
}

func (r *Runtime) stringproto_substr(call FunctionCall) Value {
	r.checkObjectCoercible(call.This)
	s := r.stringOf(call.This)                      // mustard(sweep-charges): a BigInt's conversion charged
	start := r.numArg(call.Argument(0)).ToInteger() // mustard(sweep-charges): a long string argument's conversion charged
	var length int64
	sl := int64(s.Length())
	if arg := call.Argument(1); arg != _undefined {
		length = arg.ToInteger()
	} else {
		length = sl
	}

	if start < 0 {
		start = max(sl+start, 0)
	}

	length = min(max(length, 0), sl-start)
	if length <= 0 {
		return stringEmpty
	}

	r.produce(substringBytes(s, int(length))) // mustard(strings)
	return s.Substring(int(start), int(start+length))
}

func (r *Runtime) stringIterProto_next(call FunctionCall) Value {
	thisObj := r.toObject(call.This)
	if iter, ok := thisObj.self.(*stringIterObject); ok {
		return iter.next()
	}
	panic(r.NewTypeError("Method String Iterator.prototype.next called on incompatible receiver %s", r.objectproto_toString(FunctionCall{This: thisObj})))
}

func (r *Runtime) createStringIterProto(val *Object) objectImpl {
	o := newBaseObjectObj(val, r.getIteratorPrototype(), classObject)

	o._putProp("next", r.newNativeFunc(r.stringIterProto_next, "next", 0), true, false, true)
	o._putSym(SymToStringTag, valueProp(asciiString(classStringIterator), false, false, true))

	return o
}

func (r *Runtime) getStringIteratorPrototype() *Object {
	var o *Object
	if o = r.global.StringIteratorPrototype; o == nil {
		defer r.makingBuiltins()() // mustard(retained): mustard_retained.go
		o = &Object{runtime: r}
		r.global.StringIteratorPrototype = o
		o.self = r.createStringIterProto(o)
	}
	return o
}

func createStringProtoTemplate() *objectTemplate {
	t := newObjectTemplate()
	t.protoFactory = func(r *Runtime) *Object {
		return r.global.ObjectPrototype
	}

	t.putStr("length", func(r *Runtime) Value { return valueProp(intToValue(0), false, false, false) })

	t.putStr("constructor", func(r *Runtime) Value { return valueProp(r.getString(), true, false, true) })

	t.putStr("at", func(r *Runtime) Value { return r.methodProp(r.stringproto_at, "at", 1) })
	t.putStr("charAt", func(r *Runtime) Value { return r.methodProp(r.stringproto_charAt, "charAt", 1) })
	t.putStr("charCodeAt", func(r *Runtime) Value { return r.methodProp(r.stringproto_charCodeAt, "charCodeAt", 1) })
	t.putStr("codePointAt", func(r *Runtime) Value { return r.methodProp(r.stringproto_codePointAt, "codePointAt", 1) })
	t.putStr("concat", func(r *Runtime) Value { return r.methodProp(r.stringproto_concat, "concat", 1) })
	t.putStr("endsWith", func(r *Runtime) Value { return r.methodProp(r.stringproto_endsWith, "endsWith", 1) })
	t.putStr("includes", func(r *Runtime) Value { return r.methodProp(r.stringproto_includes, "includes", 1) })
	t.putStr("indexOf", func(r *Runtime) Value { return r.methodProp(r.stringproto_indexOf, "indexOf", 1) })
	t.putStr("lastIndexOf", func(r *Runtime) Value { return r.methodProp(r.stringproto_lastIndexOf, "lastIndexOf", 1) })
	t.putStr("localeCompare", func(r *Runtime) Value { return r.methodProp(r.stringproto_localeCompare, "localeCompare", 1) })
	t.putStr("match", func(r *Runtime) Value { return r.methodProp(r.stringproto_match, "match", 1) })
	t.putStr("matchAll", func(r *Runtime) Value { return r.methodProp(r.stringproto_matchAll, "matchAll", 1) })
	t.putStr("normalize", func(r *Runtime) Value { return r.methodProp(r.stringproto_normalize, "normalize", 0) })
	t.putStr("padEnd", func(r *Runtime) Value { return r.methodProp(r.stringproto_padEnd, "padEnd", 1) })
	t.putStr("padStart", func(r *Runtime) Value { return r.methodProp(r.stringproto_padStart, "padStart", 1) })
	t.putStr("repeat", func(r *Runtime) Value { return r.methodProp(r.stringproto_repeat, "repeat", 1) })
	t.putStr("replace", func(r *Runtime) Value { return r.methodProp(r.stringproto_replace, "replace", 2) })
	t.putStr("replaceAll", func(r *Runtime) Value { return r.methodProp(r.stringproto_replaceAll, "replaceAll", 2) })
	t.putStr("search", func(r *Runtime) Value { return r.methodProp(r.stringproto_search, "search", 1) })
	t.putStr("slice", func(r *Runtime) Value { return r.methodProp(r.stringproto_slice, "slice", 2) })
	t.putStr("split", func(r *Runtime) Value { return r.methodProp(r.stringproto_split, "split", 2) })
	t.putStr("startsWith", func(r *Runtime) Value { return r.methodProp(r.stringproto_startsWith, "startsWith", 1) })
	t.putStr("substring", func(r *Runtime) Value { return r.methodProp(r.stringproto_substring, "substring", 2) })
	t.putStr("toLocaleLowerCase", func(r *Runtime) Value { return r.methodProp(r.stringproto_toLowerCase, "toLocaleLowerCase", 0) })
	t.putStr("toLocaleUpperCase", func(r *Runtime) Value { return r.methodProp(r.stringproto_toUpperCase, "toLocaleUpperCase", 0) })
	t.putStr("toLowerCase", func(r *Runtime) Value { return r.methodProp(r.stringproto_toLowerCase, "toLowerCase", 0) })
	t.putStr("toString", func(r *Runtime) Value { return r.methodProp(r.stringproto_toString, "toString", 0) })
	t.putStr("toUpperCase", func(r *Runtime) Value { return r.methodProp(r.stringproto_toUpperCase, "toUpperCase", 0) })
	t.putStr("trim", func(r *Runtime) Value { return r.methodProp(r.stringproto_trim, "trim", 0) })
	t.putStr("trimEnd", func(r *Runtime) Value { return valueProp(r.getStringproto_trimEnd(), true, false, true) })
	t.putStr("trimStart", func(r *Runtime) Value { return valueProp(r.getStringproto_trimStart(), true, false, true) })
	t.putStr("trimRight", func(r *Runtime) Value { return valueProp(r.getStringproto_trimEnd(), true, false, true) })
	t.putStr("trimLeft", func(r *Runtime) Value { return valueProp(r.getStringproto_trimStart(), true, false, true) })
	t.putStr("valueOf", func(r *Runtime) Value { return r.methodProp(r.stringproto_valueOf, "valueOf", 0) })

	// Annex B
	t.putStr("substr", func(r *Runtime) Value { return r.methodProp(r.stringproto_substr, "substr", 2) })

	t.putSym(SymIterator, func(r *Runtime) Value {
		return valueProp(r.newNativeFunc(r.stringproto_iterator, "[Symbol.iterator]", 0), true, false, true)
	})

	return t
}

func (r *Runtime) getStringproto_trimEnd() *Object {
	ret := r.global.stringproto_trimEnd
	if ret == nil {
		defer r.makingBuiltins()() // mustard(retained): mustard_retained.go
		ret = r.newNativeFunc(r.stringproto_trimEnd, "trimEnd", 0)
		r.global.stringproto_trimEnd = ret
	}
	return ret
}

func (r *Runtime) getStringproto_trimStart() *Object {
	ret := r.global.stringproto_trimStart
	if ret == nil {
		defer r.makingBuiltins()() // mustard(retained): mustard_retained.go
		ret = r.newNativeFunc(r.stringproto_trimStart, "trimStart", 0)
		r.global.stringproto_trimStart = ret
	}
	return ret
}

func (r *Runtime) getStringSingleton() *stringObject {
	ret := r.stringSingleton
	if ret == nil {
		defer r.makingBuiltins()() // mustard(retained): mustard_retained.go
		ret = r.builtin_new(r.getString(), nil).self.(*stringObject)
		r.stringSingleton = ret
	}
	return ret
}

func (r *Runtime) getString() *Object {
	ret := r.global.String
	if ret == nil {
		defer r.makingBuiltins()() // mustard(retained): mustard_retained.go
		ret = &Object{runtime: r}
		r.global.String = ret
		proto := r.getStringPrototype()
		o := r.newNativeFuncAndConstruct(ret, r.builtin_String, r.wrapNativeConstruct(r.builtin_newString, ret, proto), proto, "String", intToValue(1))
		ret.self = o
		o._putProp("fromCharCode", r.newNativeFunc(r.string_fromcharcode, "fromCharCode", 1), true, false, true)
		o._putProp("fromCodePoint", r.newNativeFunc(r.string_fromcodepoint, "fromCodePoint", 1), true, false, true)
		o._putProp("raw", r.newNativeFunc(r.string_raw, "raw", 1), true, false, true)
	}
	return ret
}

var stringProtoTemplate *objectTemplate
var stringProtoTemplateOnce sync.Once

func getStringProtoTemplate() *objectTemplate {
	stringProtoTemplateOnce.Do(func() {
		stringProtoTemplate = createStringProtoTemplate()
	})
	return stringProtoTemplate
}

func (r *Runtime) getStringPrototype() *Object {
	ret := r.global.StringPrototype
	if ret == nil {
		defer r.makingBuiltins()() // mustard(retained): mustard_retained.go
		ret = &Object{runtime: r}
		r.global.StringPrototype = ret
		o := r.newTemplatedObject(getStringProtoTemplate(), ret)
		o.class = classString
	}
	return ret
}
