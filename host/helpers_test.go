package host

import "math"

var (
	nan     = math.NaN()
	negZero = math.Copysign(0, -1)
)
