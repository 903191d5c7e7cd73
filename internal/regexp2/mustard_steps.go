package regexp2

import (
	"math"
	"time"
)

// Step counting (a mustard-sidecar addition; see PATCHES.md).
//
// A backtracking search is one call that may run for hours, and upstream's
// only bound on it is MatchTimeout, a wall-clock deadline: a search that
// times out on a busy machine completes on a quiet one. A search made
// through one of the *With methods counts its work in steps instead, the
// same count for the same pattern, input and start on every run, and
// reports them to the caller's StepHook as it goes, which can end it.
//
// A step is one instruction of the interpreter (executeDefault) executed,
// including each backtrack, plus one for each character an instruction
// compares in a loop of its own (a repeated character or set, a string, a
// backreference), plus, for each candidate start position, one and the
// characters the search for that position (findFirstChar) passed over.

// SearchOptions are the options of one search. They belong to the search,
// not to the shared Regexp: a Regexp may be used by many goroutines at
// once, each with its own hook.
type SearchOptions struct {
	// StepHook, if not nil, is called with the number of steps run since
	// its previous call, every StepEvery steps or so (an instruction that
	// compares many characters may pass the mark by that many) and once
	// more when the search ends, with the rest: the steps it is told of
	// add up to the search's total. An error it returns ends the search
	// with that error, and no match.
	StepHook func(steps int) error
	// StepEvery is how many steps run between calls of StepHook;
	// DefaultStepEvery if 0.
	StepEvery int
	// NoTimeout turns off Regexp.MatchTimeout for this search.
	NoTimeout bool
}

// DefaultStepEvery is SearchOptions.StepEvery when it is 0.
const DefaultStepEvery = 1 << 12

// FindRunesMatchStartingAtWith is FindRunesMatchStartingAt with options.
func (re *Regexp) FindRunesMatchStartingAtWith(o *SearchOptions, r []rune, startAt int) (*Match, error) {
	return re.runWith(o, startAt, -1, r, newMatchText(r))
}

// FindNextMatchWith is FindNextMatch with options.
func (re *Regexp) FindNextMatchWith(o *SearchOptions, m *Match) (*Match, error) {
	if m == nil {
		return nil, nil
	}
	return re.runWith(o, m.textpos, m.RuneLength, m.text.runes, m.text)
}

// runWith is run (never quick) with o's hook and timeout.
func (re *Regexp) runWith(o *SearchOptions, textstart, previousMatchLength int, input []rune, textInfo *matchText) (*Match, error) {
	runner := re.getRunner()
	defer re.putRunner(runner)

	if textstart < 0 {
		if re.RightToLeft() {
			textstart = len(input)
		} else {
			textstart = 0
		}
	}
	timeout := re.MatchTimeout
	if o != nil && o.NoTimeout {
		timeout = time.Duration(math.MaxInt64)
	}
	if o != nil && o.StepHook != nil {
		runner.stepHook = o.StepHook
		runner.stepEvery = o.StepEvery
		if runner.stepEvery <= 0 {
			runner.stepEvery = DefaultStepEvery
		}
		defer func() { runner.stepHook = nil }()
	}
	m, err := runner.scan(input, textInfo, textstart, previousMatchLength, false, timeout)
	if runner.stepHook != nil && runner.steps > 0 {
		if herr := runner.stepHook(runner.steps); herr != nil && err == nil {
			return nil, herr
		}
	}
	return m, err
}

// startSteps starts a scan's count.
func (r *Runner) startSteps() {
	r.steps = 0
	r.stepCheck = math.MaxInt
	if r.stepHook != nil {
		r.stepCheck = r.stepEvery
	}
}

// reportSteps tells the hook of the steps counted since its last call,
// once the count has reached stepCheck.
func (r *Runner) reportSteps() error {
	n := r.steps
	r.steps = 0
	return r.stepHook(n)
}

// candidateSteps counts a findFirstChar call that moved from from to the
// current position.
func (r *Runner) candidateSteps(from int) {
	d := r.Runtextpos - from
	if d < 0 {
		d = -d
	}
	r.steps += 1 + d
}
