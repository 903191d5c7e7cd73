package goja

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time" // mustard(zone)
	"unicode/utf16"

	// mustard(strings): regexp2 is the fork in internal/regexp2 (step counting)
	"github.com/mustard-sidecar/mustard-sidecar/internal/goja/unistring"
	"github.com/mustard-sidecar/mustard-sidecar/internal/regexp2" // mustard(regexp-linear)
)

type regexp2MatchCache struct {
	target String
	runes  []rune
	posMap []int
}

// Not goroutine-safe. Use regexp2Wrapper.clone()
type regexp2Wrapper struct {
	rx    *regexp2.Regexp
	cache *regexp2MatchCache
}

type regexpWrapper regexp.Regexp

type positionMapItem struct {
	src, dst int
}
type positionMap []positionMapItem

func (m positionMap) get(src int) int {
	if src <= 0 {
		return src
	}
	res := sort.Search(len(m), func(n int) bool { return m[n].src >= src })
	if res >= len(m) || m[res].src != src {
		panic("index not found")
	}
	return m[res].dst
}

type arrayRuneReader struct {
	runes []rune
	pos   int
}

func (rd *arrayRuneReader) ReadRune() (r rune, size int, err error) {
	if rd.pos < len(rd.runes) {
		r = rd.runes[rd.pos]
		size = 1
		rd.pos++
	} else {
		err = io.EOF
	}
	return
}

// Not goroutine-safe. Use regexpPattern.clone()
type regexpPattern struct {
	src string

	global, ignoreCase, multiline, dotAll, sticky, unicode bool

	regexpWrapper  *regexpWrapper
	regexp2Wrapper *regexp2Wrapper
	linear         *linearSource // mustard(regexp-linear): mustard_regexp.go
}

type regexpResult struct {
	indexes []int
	groups  []string
}

func (result *regexpResult) appendIndexesAndGroup(index1, index2 int, name string) {
	result.indexes = append(result.indexes, index1, index2)
	result.groups = append(result.groups, name)
}

func submatchesToRegexpResults(submatches [][]int, groups []string) []regexpResult {
	results := make([]regexpResult, 0, len(submatches))
	for _, val := range submatches {
		results = append(results, regexpResult{indexes: val, groups: groups})
	}
	return results
}

func compileRegexp2(src string, multiline, dotAll, ignoreCase, unicode bool) (*regexp2Wrapper, error) {
	var opts = regexp2.ECMAScript
	if multiline {
		opts |= regexp2.Multiline
	}
	if dotAll {
		opts |= regexp2.Singleline
	}
	if ignoreCase {
		opts |= regexp2.IgnoreCase
	}
	if unicode {
		opts |= regexp2.Unicode
	}
	regexp2Pattern, err1 := regexp2.Compile(src, opts)
	if err1 != nil {
		return nil, fmt.Errorf("Invalid regular expression (regexp2): %s (%w)", src, err1) // mustard(regexp-syntax): %w, for regexp2SyntaxError
	}
	if d := mustardRegexpTimeout.Load(); d != 0 { // mustard(zone): mustard_zone.go
		regexp2Pattern.MatchTimeout = time.Duration(d)
	}

	return &regexp2Wrapper{rx: regexp2Pattern}, nil
}

func (p *regexpPattern) createRegexp2() {
	if p.regexp2Wrapper != nil {
		return
	}
	rx, err := compileRegexp2(p.src, p.multiline, p.dotAll, p.ignoreCase, p.unicode)
	if err != nil {
		// At this point the regexp should have been successfully converted to re2, if it fails now, it's a bug.
		panic(err)
	}
	p.regexp2Wrapper = rx
}

func buildUTF8PosMap(s unicodeString) (positionMap, string) {
	pm := make(positionMap, 0, s.Length())
	rd := s.Reader()
	sPos, utf8Pos := 0, 0
	var sb strings.Builder
	for {
		r, size, err := rd.ReadRune()
		if err == io.EOF {
			break
		}
		if err != nil {
			// the string contains invalid UTF-16, bailing out
			return nil, ""
		}
		utf8Size, _ := sb.WriteRune(r)
		sPos += size
		utf8Pos += utf8Size
		pm = append(pm, positionMapItem{src: utf8Pos, dst: sPos})
	}
	return pm, sb.String()
}

// findSubmatchIndex finds the first match at or after start, and reports
// to r's Meter the span it scanned: from start to the end of the match (or
// of s), so that successive searches through s cost O(len(s)) in all.
func (p *regexpPattern) findSubmatchIndex(r *Runtime, s String, start int) regexpResult {
	res := p.findSubmatchIndexFrom(r, s, start)
	r.matched(start, scanEnd(res, s.Length())) // mustard(regexp-linear)
	return res
}

func (p *regexpPattern) findSubmatchIndexFrom(r *Runtime, s String, start int) regexpResult {
	if res, ok := p.mustardFind(r, s, start); ok { // mustard(regexp-linear): mustard_regexp.go
		return res
	}
	if p.regexpWrapper == nil {
		return p.regexp2Wrapper.findSubmatchIndex(r, s, start, p.unicode, p.global || p.sticky) // mustard(regexp-syntax)
	}
	if start != 0 {
		// Unfortunately Go's regexp library does not allow starting from an arbitrary position.
		// If we just drop the first _start_ characters of the string the assertions (^, $, \b and \B) will not
		// work correctly.
		p.createRegexp2()
		return p.regexp2Wrapper.findSubmatchIndex(r, s, start, p.unicode, p.global || p.sticky) // mustard(regexp-syntax)
	}
	if p.unicode && r.metered() { // mustard(strings): a full-Unicode match of a non-ASCII string maps its positions first
		if _, u := devirtualizeString(s); u != nil {
			r.converted(u.Length(), posMapBytes)
		}
	}
	return p.regexpWrapper.findSubmatchIndex(s, p.unicode)
}

func (p *regexpPattern) findAllSubmatchIndex(r *Runtime, s String, start int, limit int, sticky bool) []regexpResult {
	if res, ok := p.mustardFindAll(r, s, start, limit, sticky); ok { // mustard(regexp-linear): mustard_regexp.go
		return res
	}
	if p.regexpWrapper == nil {
		return p.regexp2Wrapper.findAllSubmatchIndex(r, s, start, limit, sticky, p.unicode) // mustard(regexp-syntax)
	}
	if start == 0 {
		a, u := devirtualizeString(s)
		if u == nil {
			res := r.findAllBounded(limit, func(n int) []regexpResult { // mustard(strings): in batches
				return p.regexpWrapper.findAllSubmatchIndex(string(a), n, sticky)
			})
			return r.foundAll(res, 0, limit, len(a)) // mustard(strings)
		}
		if limit == 1 {
			if p.unicode {
				r.converted(u.Length(), posMapBytes) // mustard(regexp-syntax)
			}
			result := p.regexpWrapper.findSubmatchIndexUnicode(u, p.unicode)
			r.matched(0, scanEnd(result, u.Length())) // mustard(regexp-linear)
			if result.indexes == nil {
				return nil
			}
			return []regexpResult{result}
		}
		// Unfortunately Go's regexp library lacks FindAllReaderSubmatchIndex(), so we have to use a UTF-8 string as an
		// input.
		if p.unicode {
			// Try to convert s to UTF-8. If it does not contain any invalid UTF-16 we can do the matching in UTF-8.
			r.converted(u.Length(), utf8PosMapBytes) // mustard(strings)
			pm, str := buildUTF8PosMap(u)
			if pm != nil {
				res := r.findAllBounded(limit, func(n int) []regexpResult { // mustard(strings): in batches
					return p.regexpWrapper.findAllSubmatchIndex(str, n, sticky)
				})
				for _, result := range res {
					for i, idx := range result.indexes {
						result.indexes[i] = pm.get(idx)
					}
				}
				return r.foundAll(res, 0, limit, u.Length()) // mustard(strings)
			}
		}
	}

	p.createRegexp2()
	return p.regexp2Wrapper.findAllSubmatchIndex(r, s, start, limit, sticky, p.unicode) // mustard(regexp-syntax)
}

// clone creates a copy of the regexpPattern which can be used concurrently.
func (p *regexpPattern) clone() *regexpPattern {
	ret := &regexpPattern{
		src:        p.src,
		global:     p.global,
		ignoreCase: p.ignoreCase,
		multiline:  p.multiline,
		dotAll:     p.dotAll,
		sticky:     p.sticky,
		unicode:    p.unicode,
		linear:     p.linear, // mustard(regexp-linear)
	}
	if p.regexpWrapper != nil {
		ret.regexpWrapper = p.regexpWrapper.clone()
	}
	if p.regexp2Wrapper != nil {
		ret.regexp2Wrapper = p.regexp2Wrapper.clone()
	}
	return ret
}

type regexpObject struct {
	baseObject
	pattern *regexpPattern
	source  String

	standard bool
}

func (r *regexp2Wrapper) findSubmatchIndex(rt *Runtime, s String, start int, fullUnicode, doCache bool) regexpResult { // mustard(strings)
	if fullUnicode {
		return r.findSubmatchIndexUnicode(rt, s, start, doCache) // mustard(strings)
	}
	return r.findSubmatchIndexUTF16(rt, s, start, doCache) // mustard(strings)
}

func (r *regexp2Wrapper) findUTF16Cached(rt *Runtime, s String, start int, doCache bool) (match *regexp2.Match, runes []rune, err error) { // mustard(regexp-linear)
	wrapped := r.rx
	cache := r.cache
	if cache != nil && cache.posMap == nil && cache.target.SameAs(s) {
		runes = cache.runes
	} else {
		rt.converted(s.Length(), runeBytes) // mustard(strings)
		runes = s.utf16Runes()
		cache = nil
	}
	match, err = rt.regexp2Scan(r, func(o *regexp2.SearchOptions) (*regexp2.Match, error) {
		return wrapped.FindRunesMatchStartingAtWith(o, runes, start)
	}) // mustard(regexp-linear): metered, interruptible
	if doCache && match != nil && err == nil {
		if cache == nil {
			if r.cache == nil {
				r.cache = new(regexp2MatchCache)
			}
			*r.cache = regexp2MatchCache{
				target: s,
				runes:  runes,
			}
		}
	} else {
		r.cache = nil
	}
	return
}

func (r *regexp2Wrapper) findSubmatchIndexUTF16(rt *Runtime, s String, start int, doCache bool) regexpResult { // mustard(strings)
	match, _, err := r.findUTF16Cached(rt, s, start, doCache)
	if err != nil {
		return regexpResult{}
	}

	if match == nil {
		return regexpResult{}
	}
	groups := match.Groups()

	result := regexpResult{
		indexes: make([]int, 0, len(groups)<<1),
		groups:  make([]string, 0, len(groups)),
	}
	for _, group := range groups {
		if len(group.Captures) > 0 {
			result.appendIndexesAndGroup(group.RuneIndex, group.RuneIndex+group.RuneLength, group.Name)
		} else {
			result.appendIndexesAndGroup(-1, 0, group.Name)
		}
	}
	return result
}

func (r *regexp2Wrapper) findUnicodeCached(rt *Runtime, s String, start int, doCache bool) (match *regexp2.Match, posMap []int, err error) { // mustard(strings)
	var (
		runes       []rune
		mappedStart int
		splitPair   bool
		savedRune   rune
	)
	wrapped := r.rx
	cache := r.cache
	if cache != nil && cache.posMap != nil && cache.target.SameAs(s) {
		runes, posMap = cache.runes, cache.posMap
		mappedStart, splitPair = posMapReverseLookup(posMap, start)
	} else {
		rt.converted(s.Length(), posMapBytes) // mustard(strings)
		posMap, runes, mappedStart, splitPair = buildPosMap(&lenientUtf16Decoder{utf16Reader: s.utf16Reader()}, s.Length(), start)
		cache = nil
	}
	if splitPair {
		// temporarily set the rune at mappedStart to the second code point of the pair
		_, second := utf16.EncodeRune(runes[mappedStart])
		savedRune, runes[mappedStart] = runes[mappedStart], second
	}
	match, err = rt.regexp2Scan(r, func(o *regexp2.SearchOptions) (*regexp2.Match, error) {
		return wrapped.FindRunesMatchStartingAtWith(o, runes, mappedStart)
	}) // mustard(regexp-linear): metered, interruptible
	if doCache && match != nil && err == nil {
		if splitPair {
			runes[mappedStart] = savedRune
		}
		if cache == nil {
			if r.cache == nil {
				r.cache = new(regexp2MatchCache)
			}
			*r.cache = regexp2MatchCache{
				target: s,
				runes:  runes,
				posMap: posMap,
			}
		}
	} else {
		r.cache = nil
	}

	return
}

func (r *regexp2Wrapper) findSubmatchIndexUnicode(rt *Runtime, s String, start int, doCache bool) regexpResult { // mustard(strings)
	match, posMap, err := r.findUnicodeCached(rt, s, start, doCache)
	if match == nil || err != nil {
		return regexpResult{}
	}

	groups := match.Groups()

	result := regexpResult{
		indexes: make([]int, 0, len(groups)<<1),
		groups:  make([]string, 0, len(groups)),
	}
	for _, group := range groups {
		if len(group.Captures) > 0 {
			result.appendIndexesAndGroup(posMap[group.RuneIndex], posMap[group.RuneIndex+group.RuneLength], group.Name)
		} else {
			result.appendIndexesAndGroup(-1, 0, group.Name)
		}
	}
	return result
}

func (r *regexp2Wrapper) findAllSubmatchIndexUTF16(rt *Runtime, s String, start, limit int, sticky bool) []regexpResult { // mustard(strings)
	wrapped := r.rx
	match, runes, err := r.findUTF16Cached(rt, s, start, false) // mustard(regexp-linear)
	if match == nil || err != nil {
		rt.matched(start, len(runes)) // mustard(regexp-linear)
		return nil
	}
	if limit < 0 {
		limit = len(runes) + 1
	}
	rt.allocBytes(mulBytes(int64(limit), matchBytes)) // mustard(strings): the capacity is preallocated
	results := make([]regexpResult, 0, limit)
	scanned := start // mustard(strings): each match reports the span since the previous one
	for match != nil {
		groups := match.Groups()

		result := regexpResult{
			indexes: make([]int, 0, len(groups)<<1),
			groups:  make([]string, 0, len(groups)),
		}

		for _, group := range groups {
			if len(group.Captures) > 0 {
				startPos := group.RuneIndex
				endPos := group.RuneIndex + group.RuneLength
				result.appendIndexesAndGroup(startPos, endPos, group.Name)
			} else {
				result.appendIndexesAndGroup(-1, 0, group.Name)
			}
		}
		rt.matched(scanned, result.indexes[1]) // mustard(strings)
		scanned = max(scanned, result.indexes[1])
		rt.alloc(resultBytes(result)) // mustard(strings)
		rt.poll(len(results))         // mustard(strings)

		if sticky && len(result.indexes) > 1 {
			if result.indexes[0] != start {
				break
			}
			start = result.indexes[1]
		}

		results = append(results, result)
		limit--
		if limit <= 0 {
			break
		}
		match, err = rt.regexp2Scan(r, func(o *regexp2.SearchOptions) (*regexp2.Match, error) { return wrapped.FindNextMatchWith(o, match) }) // mustard(regexp-linear): metered, interruptible
		if err != nil {
			return nil
		}
		if match == nil {
			rt.matched(scanned, len(runes)) // mustard(regexp-linear)
		}
	}
	return results
}

func buildPosMap(rd io.RuneReader, l, start int) (posMap []int, runes []rune, mappedStart int, splitPair bool) {
	posMap = make([]int, 0, l+1)
	curPos := 0
	runes = make([]rune, 0, l)
	startFound := false
	for {
		if !startFound {
			if curPos == start {
				mappedStart = len(runes)
				startFound = true
			}
			if curPos > start {
				// start position splits a surrogate pair
				mappedStart = len(runes) - 1
				splitPair = true
				startFound = true
			}
		}
		rn, size, err := rd.ReadRune()
		if err != nil {
			break
		}
		runes = append(runes, rn)
		posMap = append(posMap, curPos)
		curPos += size
	}
	posMap = append(posMap, curPos)
	return
}

func posMapReverseLookup(posMap []int, pos int) (int, bool) {
	mapped := sort.SearchInts(posMap, pos)
	if mapped < len(posMap) && posMap[mapped] != pos {
		return mapped - 1, true
	}
	return mapped, false
}

func (r *regexp2Wrapper) findAllSubmatchIndexUnicode(rt *Runtime, s unicodeString, start, limit int, sticky bool) []regexpResult { // mustard(strings)
	wrapped := r.rx
	if limit < 0 {
		limit = len(s) + 1
	}
	rt.allocBytes(mulBytes(int64(limit), matchBytes)) // mustard(strings): the capacity is preallocated
	results := make([]regexpResult, 0, limit)
	match, posMap, err := r.findUnicodeCached(rt, s, start, false) // mustard(regexp-linear)
	if err != nil {
		return nil
	}
	scanned := start // mustard(strings): each match reports the span since the previous one
	if match == nil {
		rt.matched(scanned, s.Length()) // mustard(strings)
	}
	for match != nil {
		groups := match.Groups()

		result := regexpResult{
			indexes: make([]int, 0, len(groups)<<1),
			groups:  make([]string, 0, len(groups)),
		}

		for _, group := range groups {
			if len(group.Captures) > 0 {
				start := posMap[group.RuneIndex]
				end := posMap[group.RuneIndex+group.RuneLength]
				result.appendIndexesAndGroup(start, end, group.Name)
			} else {
				result.appendIndexesAndGroup(-1, 0, group.Name)
			}
		}
		rt.matched(scanned, result.indexes[1]) // mustard(strings)
		scanned = max(scanned, result.indexes[1])
		rt.alloc(resultBytes(result)) // mustard(strings)
		rt.poll(len(results))         // mustard(strings)

		if sticky && len(result.indexes) > 1 {
			if result.indexes[0] != start {
				break
			}
			start = result.indexes[1]
		}

		results = append(results, result)
		match, err = rt.regexp2Scan(r, func(o *regexp2.SearchOptions) (*regexp2.Match, error) { return wrapped.FindNextMatchWith(o, match) }) // mustard(regexp-linear): metered, interruptible
		if err != nil {
			return nil
		}
		if match == nil {
			rt.matched(scanned, s.Length()) // mustard(regexp-linear)
		}
	}
	return results
}

func (r *regexp2Wrapper) findAllSubmatchIndex(rt *Runtime, s String, start, limit int, sticky, fullUnicode bool) []regexpResult { // mustard(regexp-linear)
	a, u := devirtualizeString(s)
	if u != nil {
		if fullUnicode {
			return r.findAllSubmatchIndexUnicode(rt, u, start, limit, sticky) // mustard(strings)
		}
		return r.findAllSubmatchIndexUTF16(rt, u, start, limit, sticky) // mustard(strings)
	}
	return r.findAllSubmatchIndexUTF16(rt, a, start, limit, sticky) // mustard(strings)
}

func (r *regexp2Wrapper) clone() *regexp2Wrapper {
	return &regexp2Wrapper{
		rx: r.rx,
	}
}

func (r *regexpWrapper) findAllSubmatchIndex(s string, limit int, sticky bool) []regexpResult {
	wrapped := (*regexp.Regexp)(r)
	results := submatchesToRegexpResults(wrapped.FindAllStringSubmatchIndex(s, limit), wrapped.SubexpNames())
	pos := 0
	if sticky {
		for i, result := range results {
			if len(result.indexes) > 1 {
				if result.indexes[0] != pos {
					return results[:i]
				}
				pos = result.indexes[1]
			}
		}
	}
	return results
}

func (r *regexpWrapper) findSubmatchIndex(s String, fullUnicode bool) regexpResult {
	a, u := devirtualizeString(s)
	if u != nil {
		return r.findSubmatchIndexUnicode(u, fullUnicode)
	}
	return r.findSubmatchIndexASCII(string(a))
}

func (r *regexpWrapper) findSubmatchIndexASCII(s string) regexpResult {
	wrapped := (*regexp.Regexp)(r)
	return regexpResult{indexes: wrapped.FindStringSubmatchIndex(s), groups: wrapped.SubexpNames()}
}

func (r *regexpWrapper) findSubmatchIndexUnicode(s unicodeString, fullUnicode bool) regexpResult {
	wrapped := (*regexp.Regexp)(r)
	if fullUnicode {
		posMap, runes, _, _ := buildPosMap(&lenientUtf16Decoder{utf16Reader: s.utf16Reader()}, s.Length(), 0)
		result := regexpResult{indexes: wrapped.FindReaderSubmatchIndex(&arrayRuneReader{runes: runes})}
		for i, item := range result.indexes {
			if item >= 0 {
				result.indexes[i] = posMap[item]
			}
		}
		return result
	}
	return regexpResult{indexes: wrapped.FindReaderSubmatchIndex(s.utf16RuneReader()), groups: wrapped.SubexpNames()}
}

func (r *regexpWrapper) clone() *regexpWrapper {
	return r
}

func (r *Runtime) createRegexpGroupsObj(valueArray []Value, groupNames []string) *Object {
	var groups *baseObject
	for index := 1; index < len(valueArray); index++ {
		if index < len(groupNames) {
			name := groupNames[index]
			if name == "" {
				continue
			} else if groups == nil {
				groups = r.newBaseObject(nil, classObject)
			}
			groups.setOwnStr(unistring.NewFromString(name), valueArray[index], false)
		}
	}
	if groups != nil {
		return groups.val
	}
	return nil
}

func createRegexpGroupsMap(result regexpResult) (groups map[unistring.String]int) {
	if len(result.groups) > 0 {
		groups = make(map[unistring.String]int)
		for i := 1; i < len(result.groups); i++ {
			if group := result.groups[i]; group != "" {
				idx := i * 2
				if idx < len(result.indexes)-1 {
					groups[unistring.NewFromString(group)] = idx
				}
			}
		}
	}
	return
}

func (r *regexpObject) execResultToArray(target String, result regexpResult) Value {
	captureCount := len(result.indexes) >> 1
	if rt := r.val.runtime; rt.metered() { // mustard(strings): the slots, the captures' copies, input/index/groups
		n := mulBytes(int64(captureCount), valueBytes) + 3*propertyBytes
		for i := 0; i+1 < len(result.indexes); i += 2 {
			if result.indexes[i] >= 0 {
				n = addBytes(n, substringBytes(target, result.indexes[i+1]-result.indexes[i]))
			}
		}
		rt.produce(n)
	}
	valueArray := make([]Value, captureCount)
	matchIndex := result.indexes[0]
	valueArray[0] = target.Substring(result.indexes[0], result.indexes[1])
	lowerBound := 0
	for index := 1; index < captureCount; index++ {
		offset := index << 1
		if result.indexes[offset] >= 0 && result.indexes[offset+1] >= lowerBound {
			valueArray[index] = target.Substring(result.indexes[offset], result.indexes[offset+1])
			lowerBound = result.indexes[offset]
		} else {
			valueArray[index] = _undefined
		}
	}
	match := r.val.runtime.newArrayValues(valueArray)
	match.self.setOwnStr("input", target, false)
	match.self.setOwnStr("index", intToValue(int64(matchIndex)), false)

	groups := r.val.runtime.createRegexpGroupsObj(valueArray, result.groups)

	var groupsVal Value
	if groups != nil {
		groupsVal = groups
	} else {
		groupsVal = _undefined
	}
	match.self.defineOwnPropertyStr("groups", PropertyDescriptor{
		Value:        groupsVal,
		Writable:     FLAG_TRUE,
		Configurable: FLAG_TRUE,
		Enumerable:   FLAG_TRUE,
	}, false)

	return match
}

func (r *regexpObject) getLastIndex() int64 {
	lastIndex := toLength(r.getStr("lastIndex", nil))
	if !r.pattern.global && !r.pattern.sticky {
		return 0
	}
	return lastIndex
}

func (r *regexpObject) execRegexp(target String) (match bool, result regexpResult) {
	index := r.getLastIndex()
	if index >= 0 && index <= int64(target.Length()) {
		result = r.pattern.findSubmatchIndex(r.val.runtime, target, int(index)) // mustard(strings)
	}
	match = len(result.indexes) > 0 && (!r.pattern.sticky || int64(result.indexes[0]) == index)

	if r.pattern.global || r.pattern.sticky {
		var newLastIndex int64
		if match {
			newLastIndex = int64(result.indexes[1])
		}
		r.setOwnStr("lastIndex", intToValue(newLastIndex), true)
	}

	return
}

func (r *regexpObject) exec(target String) Value {
	match, result := r.execRegexp(target)
	if match {
		return r.execResultToArray(target, result)
	}
	return _null
}

func (r *regexpObject) test(target String) bool {
	match, _ := r.execRegexp(target)
	return match
}

func (r *regexpObject) clone() *regexpObject {
	r1 := r.val.runtime.newRegexpObject(r.prototype)
	r1.source = r.source
	r1.pattern = r.pattern

	return r1
}

func (r *regexpObject) init() {
	r.baseObject.init()
	r.standard = true
	r._putProp("lastIndex", intToValue(0), true, false, false)
}

func (r *regexpObject) setProto(proto *Object, throw bool) bool {
	res := r.baseObject.setProto(proto, throw)
	if res {
		r.standard = false
	}
	return res
}

func (r *regexpObject) defineOwnPropertyStr(name unistring.String, desc PropertyDescriptor, throw bool) bool {
	res := r.baseObject.defineOwnPropertyStr(name, desc, throw)
	if res {
		r.standard = false
	}
	return res
}

func (r *regexpObject) defineOwnPropertySym(name *Symbol, desc PropertyDescriptor, throw bool) bool {
	res := r.baseObject.defineOwnPropertySym(name, desc, throw)
	if res && r.standard {
		switch name {
		case SymMatch, SymMatchAll, SymSearch, SymSplit, SymReplace:
			r.standard = false
		}
	}
	return res
}

func (r *regexpObject) deleteStr(name unistring.String, throw bool) bool {
	res := r.baseObject.deleteStr(name, throw)
	if res {
		r.standard = false
	}
	return res
}

func (r *regexpObject) setOwnStr(name unistring.String, value Value, throw bool) bool {
	res := r.baseObject.setOwnStr(name, value, throw)
	if res && r.standard && name == "exec" {
		r.standard = false
	}
	return res
}

func (r *regexpObject) setOwnSym(name *Symbol, value Value, throw bool) bool {
	res := r.baseObject.setOwnSym(name, value, throw)
	if res && r.standard {
		switch name {
		case SymMatch, SymMatchAll, SymSearch, SymSplit, SymReplace:
			r.standard = false
		}
	}
	return res
}
