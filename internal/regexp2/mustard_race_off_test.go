//go:build !race

package regexp2

const raceEnabled = false
