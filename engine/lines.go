package engine

import "sort"

// lineMap turns positions in the instrumented source back into positions in
// the guest's own source, so tracebacks point at what the guest wrote.
type lineMap struct {
	starts    []int                   // original line start offsets
	functions []span                  // function ranges in the original source
	byLine    map[int][]lineInsertion // instrumented line -> insertions on it
	lastLine  int
	lastWidth int

	// ts, for a TypeScript program, maps positions in the JavaScript its
	// types were erased into (the "original" source above) to its own.
	ts *tsMap
}

type lineInsertion struct {
	col     int // 1-based column in the instrumented line where it starts
	width   int // bytes inserted
	origCol int // column in the original line it was inserted before
}

func newLineMap(src string, ins []insertion, functions []span) lineMap {
	m := lineMap{byLine: map[int][]lineInsertion{}, functions: functions}
	starts := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	m.starts = starts
	m.lastLine = len(starts)
	m.lastWidth = len(src) - starts[len(starts)-1]
	shift := map[int]int{}
	for _, x := range ins {
		line := sort.Search(len(starts), func(i int) bool { return starts[i] > x.at }) // 1-based
		origCol := x.at - starts[line-1] + 1
		m.byLine[line] = append(m.byLine[line], lineInsertion{col: origCol + shift[line], width: len(x.text), origCol: origCol})
		shift[line] += len(x.text)
	}
	return m
}

// original maps an instrumented line and column to the guest's own.
func (m lineMap) original(line, col int) (int, int) {
	if line > m.lastLine {
		return m.lastLine, m.lastWidth + 1
	}
	shift := 0
	for _, x := range m.byLine[line] {
		if col < x.col {
			break
		}
		if col < x.col+x.width {
			return line, x.origCol
		}
		shift += x.width
	}
	return line, col - shift
}

// guest maps a position in the source the program ran as (what original
// returns) to the guest's own: the TypeScript source of a TypeScript
// program.
func (m lineMap) guest(line, col int) (int, int) { return m.ts.source(line, col) }

// inFunction reports whether an original position lies inside a function,
// which tells an anonymous function's frame from the script's own.
func (m lineMap) inFunction(line, col int) bool {
	if line < 1 || line > len(m.starts) {
		return false
	}
	at := m.starts[line-1] + col - 1
	for _, f := range m.functions {
		if at > f.start && at < f.end {
			return true
		}
	}
	return false
}
