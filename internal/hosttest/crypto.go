package hosttest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func hmacHex(key []byte, msg string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// Token is the snapshot token for id under key.
func Token(key []byte, snapshotID string) string { return hmacHex(key, snapshotID) }
