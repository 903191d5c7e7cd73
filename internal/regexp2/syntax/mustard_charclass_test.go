package syntax

import (
	"testing"
	"unicode"
)

// addCaseEquivalences visits only the characters in unicode.CaseRanges
// and foldOutsideCaseRanges: every other one must fold to itself.
func TestFoldOutsideCaseRanges(t *testing.T) {
	inRanges := func(r rune) bool {
		for _, c := range unicode.CaseRanges {
			if r >= rune(c.Lo) && r <= rune(c.Hi) {
				return true
			}
		}
		return false
	}
	listed := map[rune]bool{}
	for _, r := range foldOutsideCaseRanges {
		listed[r] = true
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.SimpleFold(r) != r && !inRanges(r) && !listed[r] {
			t.Errorf("%U folds to %U and is outside unicode.CaseRanges", r, unicode.SimpleFold(r))
		}
	}
}

// A case-insensitive class of a million characters has the same
// equivalents as when visited character by character.
func TestAddCaseEquivalencesOfLargeClasses(t *testing.T) {
	for _, rs := range [][]SingleRange{{{0, unicode.MaxRune}}, {{0x80, 0x10FFFF}}, {{0xC0, 0xFF}}, {{'a', 'z'}, {0x1E900, 0x1E943}}} {
		fast := &CharSet{ranges: append([]SingleRange(nil), rs...)}
		fast.addCaseEquivalences()
		slow := &CharSet{ranges: append([]SingleRange(nil), rs...)}
		for _, r := range rs {
			for ch := r.First; ch <= r.Last; ch++ {
				for _, eq := range tryFindCaseEquivalences(ch) {
					slow.ranges = append(slow.ranges, SingleRange{First: eq, Last: eq})
				}
			}
		}
		slow.canonicalize()
		if fast.String() != slow.String() {
			t.Errorf("%v: %s, want %s", rs, fast, slow)
		}
	}
}
