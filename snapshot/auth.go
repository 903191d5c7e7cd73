package snapshot

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// KeyDigest is the lowercase hex SHA-256 of a snapshot key.
func KeyDigest(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:])
}

// Token is the lowercase hex HMAC-SHA256 of the snapshot id under key: the
// proof that a host accepted a snapshot.
func Token(key []byte, snapshotID string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(snapshotID))
	return hex.EncodeToString(m.Sum(nil))
}

// VerifyKeyDigest reports whether digest is the key's digest.
func VerifyKeyDigest(key []byte, digest string) bool {
	return subtle.ConstantTimeCompare([]byte(KeyDigest(key)), []byte(digest)) == 1
}

// VerifyToken reports, in constant time, whether token authenticates id
// under key.
func VerifyToken(key []byte, snapshotID, token string) bool {
	return subtle.ConstantTimeCompare([]byte(Token(key, snapshotID)), []byte(token)) == 1
}
