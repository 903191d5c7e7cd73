package diffrun

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/value"
)

// The classes of a comparison. Agree is no disagreement; the named classes
// are the known differences of issue 19 and the reference's deliberate
// departures; the coarse ones are what is left.
const (
	Agree = "agree"

	ClassStrict         = "strict mode"
	ClassForAwait       = "for await / async generators"
	ClassArrayExports   = "array exports"
	ClassMeterVisible   = "metering visible in text"
	ClassAggregate      = "AggregateError message"
	ClassOptionalSpread = "optional call spread"
	ClassNegativeYears  = "negative years"
	ClassLimitCopyOut   = "limit during copy-out"
	ClassBoundaryKinds  = "boundary error kinds"
	ClassRegex          = "regex engine"

	ClassRefSubset   = "reference subset"
	ClassAsyncOrder  = "call order (async callbacks)"
	ClassCodePoints  = "code-point strings"
	ClassTryValue    = "completion value of try"
	ClassWording     = "error wording"
	ClassHeapLimit   = "heap and allocation limits"
	ClassValue       = "value differs"
	ClassErrorKind   = "error kind differs"
	ClassRefErrors   = "only the reference errors"
	ClassOursErrors  = "only the sidecar errors"
	ClassCallsDiffer = "calls differ"
)

// IssueClasses are the classes of issue 19's list, in its order.
var IssueClasses = []string{ClassStrict, ClassForAwait, ClassArrayExports, ClassMeterVisible, ClassAggregate,
	ClassOptionalSpread, ClassNegativeYears, ClassLimitCopyOut, ClassBoundaryKinds, ClassRegex}

// KeptClasses are differences docs/guest-language.md keeps on purpose.
var KeptClasses = []string{ClassRefSubset, ClassAsyncOrder, ClassCodePoints, ClassTryValue, ClassWording}

// CoarseClasses are the automatic classes for the rest.
var CoarseClasses = []string{ClassHeapLimit, ClassValue, ClassErrorKind, ClassRefErrors, ClassOursErrors, ClassCallsDiffer}

// Comparison is the verdict on one program.
type Comparison struct {
	Program *Program
	Ref     Outcome
	Ours    Outcome
	Class   string
	Detail  string // what differs, one line
}

var (
	reForAwait    = regexp.MustCompile(`for\s+await\b|async\s+function\s*\*|async\s*\*\s*[A-Za-z_$\[]`)
	reNotSupport  = regexp.MustCompile(`is not supported|are not supported|not supported in|is unsupported|are unsupported|only supports?\b|do(es)? not support|supported surface|must be called with new`)
	reAstral      = regexp.MustCompile(`[\x{10000}-\x{10FFFF}]|\\u\{?[dD][89abAB]|\\u\{1[0-9a-fA-F]{4}\}`)
	reThisForms   = regexp.MustCompile(`typeof this|\bthis\b|\.call\(|\.apply\(`)
	reRegexSource = regexp.MustCompile(`/[^/\n*]*[+*][^/\n]*/[dgimsuy]*|RegExp\(`)
	reNegYear     = regexp.MustCompile(`['"]-\d{6}-|['"]-\d{4}-|setUTCFullYear\(-|Date\.UTC\(-`)
)

// Compare compares the reference's run of p with the sidecar's and
// classifies a disagreement.
func Compare(p *Program, ref, ours Outcome) Comparison {
	c := Comparison{Program: p, Ref: ref, Ours: ours}
	callsSame, callDetail := sameCalls(ref.Calls, ours.Calls)
	resultSame, resultDetail := sameResult(ref.Result, ours.Result)
	switch {
	case callsSame && resultSame:
		c.Class = Agree
		return c
	case !callsSame:
		c.Detail = callDetail
	default:
		c.Detail = resultDetail
	}
	c.Class = classify(p, ref, ours, callsSame)
	return c
}

func classify(p *Program, ref, ours Outcome, callsSame bool) string {
	re, oe := ref.Result.Error, ours.Result.Error
	src := p.Source
	refText, ourText := resultText(ref.Result), resultText(ours.Result)

	// Issue classes, by what the sidecar's side shows.
	if oe != nil && oe.Kind == "Parse" && reForAwait.MatchString(src) {
		return ClassForAwait
	}
	if strings.Contains(ourText, "__mustard") {
		return ClassMeterVisible
	}
	if oe != nil && strings.Contains(oe.Message, "arrays with extra properties") {
		return ClassArrayExports
	}
	if oe != nil && (strings.Contains(oe.Message, "internal error") || strings.Contains(oe.Message, "variadic marker")) && strings.Contains(src, "?.") {
		return ClassOptionalSpread
	}
	if strings.Contains(refText, "All promises were rejected") && !strings.Contains(ourText, "All promises were rejected") {
		return ClassAggregate
	}
	if re != nil && oe != nil && re.Kind == "Limit" && oe.Kind == "Serialization" {
		return ClassLimitCopyOut
	}
	if re != nil && oe != nil && re.Kind == "Runtime" && oe.Kind == "Serialization" {
		return ClassBoundaryKinds
	}
	if re == nil && oe != nil && oe.Kind == "Limit" && reRegexSource.MatchString(src) && (strings.Contains(src, "search(") || strings.Contains(src, "test(") || strings.Contains(src, "match(") || strings.Contains(src, "replace(") || strings.Contains(src, "exec(")) {
		return ClassRegex
	}
	if reNegYear.MatchString(src) && re == nil && oe == nil {
		return ClassNegativeYears
	}
	if re != nil && oe == nil && strings.Contains(re.Message, "ReferenceError") && strings.Contains(re.Message, "is not defined") {
		return ClassStrict
	}
	if re == nil && oe == nil && callsSame && reThisForms.MatchString(src) && (strings.Contains(refText, `"undefined"`) || strings.Contains(ourText, `"object"`)) {
		return ClassStrict
	}
	if oe != nil && strings.Contains(oe.Message, "cannot cross") && reThisForms.MatchString(src) && re == nil {
		return ClassStrict
	}

	// The reference's smaller language.
	if re != nil && (re.Kind == "Parse" || re.Kind == "Validation") && (oe == nil || oe.Kind != re.Kind) {
		return ClassRefSubset
	}
	if re != nil && reNotSupport.MatchString(re.Message) && (oe == nil || oe.Kind != re.Kind || !reNotSupport.MatchString(oe.Message)) {
		return ClassRefSubset
	}
	if re != nil && re.Kind == "Limit" && (oe == nil || oe.Kind != "Limit") && (strings.Contains(re.Message, "heap") || strings.Contains(re.Message, "allocation")) {
		return ClassHeapLimit
	}

	if !callsSame {
		if sameMultiset(ref.Calls, ours.Calls) {
			return ClassAsyncOrder
		}
		return ClassCallsDiffer
	}
	if re == nil && oe == nil {
		switch {
		case reAstral.MatchString(src):
			return ClassCodePoints
		case strings.Contains(src, "try") && ref.Result.Value.Kind == value.KindUndefined:
			return ClassTryValue
		case strings.Contains(src, ".message") || strings.Contains(src, "String(error") || strings.Contains(src, "String(e)"):
			return ClassWording
		}
	}
	switch {
	case re != nil && oe != nil:
		return ClassErrorKind
	case re != nil:
		return ClassRefErrors
	case oe != nil:
		return ClassOursErrors
	}
	return ClassValue
}

func resultText(r Result) string {
	if r.Error != nil {
		return r.Error.Kind + ": " + r.Error.Message
	}
	if r.Value != nil {
		return r.Value.String()
	}
	return ""
}

func sameCalls(a, b []Call) (bool, string) {
	for i := 0; i < len(a) || i < len(b); i++ {
		if i >= len(a) || i >= len(b) {
			return false, fmt.Sprintf("call %d: reference %s, sidecar %s", i+1, callText(a, i), callText(b, i))
		}
		if a[i].Capability != b[i].Capability || !sameArgs(a[i].Args, b[i].Args) {
			return false, fmt.Sprintf("call %d: reference %s, sidecar %s", i+1, callText(a, i), callText(b, i))
		}
	}
	return true, ""
}

func sameArgs(a, b []value.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !value.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func callText(cs []Call, i int) string {
	if i >= len(cs) {
		return "none"
	}
	var args []string
	for _, a := range cs[i].Args {
		args = append(args, a.String())
	}
	return clip(cs[i].Capability+"("+strings.Join(args, ", ")+")", 160)
}

func sameMultiset(a, b []Call) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(c Call) string {
		s := c.Capability
		for _, v := range c.Args {
			s += "\x00" + v.String()
		}
		return s
	}
	ka, kb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		ka[i], kb[i] = key(a[i]), key(b[i])
	}
	sort.Strings(ka)
	sort.Strings(kb)
	for i := range ka {
		if ka[i] != kb[i] {
			return false
		}
	}
	return true
}

func sameResult(a, b Result) (bool, string) {
	switch {
	case a.Value != nil && b.Value != nil:
		if value.Equal(*a.Value, *b.Value) {
			return true, ""
		}
		if at, x, y := firstDifference("", *a.Value, *b.Value); at != "" {
			return false, fmt.Sprintf("at %s: reference %s, sidecar %s", at, clip(x.String(), 200), clip(y.String(), 200))
		}
	case a.Error != nil && b.Error != nil:
		if a.Error.Kind == b.Error.Kind {
			return true, ""
		}
	}
	return false, fmt.Sprintf("reference %s, sidecar %s", clip(resultText(a), 200), clip(resultText(b), 200))
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

// firstDifference finds the first place where a and b differ, by path
// (".key", "[i]"); "" when they differ at the top.
func firstDifference(at string, a, b value.Value) (string, value.Value, value.Value) {
	if a.Kind == b.Kind {
		switch a.Kind {
		case value.KindArray:
			if len(a.Elems) == len(b.Elems) {
				for i := range a.Elems {
					if !value.Equal(a.Elems[i], b.Elems[i]) {
						return firstDifference(fmt.Sprintf("%s[%d]", at, i), a.Elems[i], b.Elems[i])
					}
				}
			}
		case value.KindObject:
			if len(a.Members) == len(b.Members) {
				for i := range a.Members {
					ma, mb := a.Members[i], b.Members[i]
					if ma.Key != mb.Key {
						break
					}
					if !value.Equal(ma.Value, mb.Value) {
						return firstDifference(at+"."+ma.Key, ma.Value, mb.Value)
					}
				}
			}
		}
	}
	return at, a, b
}
