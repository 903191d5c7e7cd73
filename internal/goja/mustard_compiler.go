package goja

// Constant folding of logical operators (a mustard-sidecar fix; see
// PATCHES.md). Upstream, constant() and evalConst of a && b recurse into a
// twice, once to decide and once to evaluate, and a's own do the same: a
// chain of n operators took 2^n steps (1&&1&&... with 30 links compiled for
// minutes). Each node now decides and evaluates once.

type constResult struct {
	val Value
	ex  *Exception
}

func (c *compiler) rememberConst(expr compiledExpr, v Value, ex *Exception) {
	if c.consts == nil {
		c.consts = map[compiledExpr]constResult{}
	}
	c.consts[expr] = constResult{v, ex}
}

// constMemo caches a node's constant().
type constMemo int8

func (m *constMemo) get(decide func() bool) bool {
	switch *m {
	case 1:
		return true
	case 2:
		return false
	}
	r := decide()
	*m = 2
	if r {
		*m = 1
	}
	return r
}

// An optional chain that short-circuits inside a call with spread
// arguments (`o?.(...v)`, `a?.b(...v)`) jumped to the end of the chain
// past the call's endVariadic, leaving the call's variadic marker on the
// stack under the chain's undefined: the next instruction saw the marker
// as a value ("Value is not an object: [variadic marker]", or a Go panic).

// optChainJumps returns how many short-circuit jumps the enclosing
// optional chain has so far, or -1 outside one.
func (c *compiler) optChainJumps() [2]int {
	if c.block == nil || c.block.typ != blockOptChain {
		return [2]int{-1, -1}
	}
	return [2]int{len(c.block.breaks), len(c.block.conts)}
}

// dropVariadicOnShortCircuit sends the short-circuit jumps made while the
// variadic call's callee was emitted (since before, as optChainJumps
// counted) to a landing pad that drops the marker, and from there on to
// the end of the chain; the call's own path steps over the pad.
func (c *compiler) dropVariadicOnShortCircuit(before [2]int) {
	if before[0] < 0 || c.block == nil || c.block.typ != blockOptChain {
		return
	}
	breaks, conts := c.block.breaks[before[0]:], c.block.conts[before[1]:]
	if len(breaks) == 0 && len(conts) == 0 {
		return
	}
	c.emit(jump(3))
	pad := len(c.p.code)
	for _, item := range breaks {
		c.p.code[item] = jopt(pad - item)
	}
	for _, item := range conts {
		c.p.code[item] = joptc(pad - item)
	}
	c.block.breaks, c.block.conts = c.block.breaks[:before[0]], c.block.conts[:before[1]]
	// The short-circuit left undefined above the marker: move it down.
	c.emit(endVariadic)
	// Then leave the chain as the short-circuit would have: the value is
	// undefined, so this jump is always taken.
	c.block.breaks = append(c.block.breaks, len(c.p.code))
	c.emit(nil)
}
