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
