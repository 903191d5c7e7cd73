//go:build race

package goja

const raceEnabled = true
