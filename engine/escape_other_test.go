//go:build !unix

package engine

import "testing"

func makeFIFO(*testing.T, string) (string, bool) { return "", false }

func releaseFIFO(string) {}
