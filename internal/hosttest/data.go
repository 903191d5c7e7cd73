package hosttest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Transports are the two transports a host test runs over.
var Transports = []struct {
	Name  string
	JSONL bool
}{{"binary", false}, {"jsonl", true}}

// Noise returns n bytes of hex text that does not compress: snapshots
// holding it are as large as it is. The same seed gives the same text.
func Noise(seed string, n int) string {
	var b strings.Builder
	b.Grow(n + 64)
	sum := sha256.Sum256([]byte(seed))
	for b.Len() < n {
		b.WriteString(hex.EncodeToString(sum[:]))
		sum = sha256.Sum256(sum[:])
	}
	return b.String()[:n]
}
