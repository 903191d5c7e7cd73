package main

import "strings"

// splitLines splits text into lines that keep their "\n" (the last one may
// lack it).
func splitLines(b []byte) []string {
	s := string(b)
	var ls []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			ls = append(ls, s)
			break
		}
		ls = append(ls, s[:i+1])
		s = s[i+1:]
	}
	return ls
}

// block is one change between two versions of a file: old lines
// [oldStart, oldEnd) replaced by new lines [newStart, newEnd).
type block struct {
	oldStart, oldEnd int
	newStart, newEnd int
}

// diffBlocks returns the blocks of a shortest edit script from a to b
// (Myers), in order.
func diffBlocks(a, b []string) []block {
	// Common prefix and suffix first: the search is quadratic in the
	// number of differences only.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ids := map[string]int{}
	intern := func(ls []string) []int {
		out := make([]int, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x := intern(a[pre : len(a)-suf])
	y := intern(b[pre : len(b)-suf])
	n, m := len(x), len(y)
	// equal[i] reports, per old line, whether it is kept; matched pairs in order.
	type pair struct{ i, j int }
	var pairs []pair
	if n > 0 && m > 0 {
		max := n + m
		off := max + 1
		v := make([]int, 2*max+4)
		var trace [][]int
		found := false
		for d := 0; d <= max && !found; d++ {
			snap := make([]int, 2*d+3)
			copy(snap, v[off-d-1:off+d+2])
			trace = append(trace, snap)
			for k := -d; k <= d; k += 2 {
				var i int
				if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
					i = v[off+k+1]
				} else {
					i = v[off+k-1] + 1
				}
				j := i - k
				for i < n && j < m && x[i] == y[j] {
					i++
					j++
				}
				v[off+k] = i
				if i >= n && j >= m {
					found = true
					break
				}
			}
		}
		// Walk back through the snapshots.
		i, j := n, m
		for d := len(trace) - 1; d >= 0 && (i > 0 || j > 0); d-- {
			snap := trace[d]
			at := func(k int) int { return snap[k+d+1] }
			k := i - j
			var pk int
			if d == 0 {
				pk = 0
			} else if k == -d || (k != d && at(k-1) < at(k+1)) {
				pk = k + 1
			} else {
				pk = k - 1
			}
			var pi int
			if d == 0 {
				pi = 0
			} else {
				pi = at(pk)
			}
			pj := pi - pk
			for i > pi && j > pj && i > 0 && j > 0 && x[i-1] == y[j-1] {
				i--
				j--
				pairs = append(pairs, pair{i, j})
			}
			if d == 0 {
				break
			}
			i, j = pi, pj
		}
		for l, r := 0, len(pairs)-1; l < r; l, r = l+1, r-1 {
			pairs[l], pairs[r] = pairs[r], pairs[l]
		}
	}
	var bs []block
	ai, bj := 0, 0
	for _, p := range append(pairs, pair{n, m}) {
		if p.i > ai || p.j > bj {
			bs = append(bs, block{pre + ai, pre + p.i, pre + bj, pre + p.j})
		}
		ai, bj = p.i+1, p.j+1
	}
	return bs
}
