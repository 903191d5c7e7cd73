package snapshot

import "testing"

// A Verifier agrees with the one-shot functions, call after call.
func TestVerifierAgreesWithTokens(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	v := NewVerifier(key)
	for _, id := range []string{ID([]byte("a")), ID([]byte("b")), ID(nil), ID([]byte("a"))} {
		tok := Token(key, id)
		if !v.VerifyToken(id, tok) || v.VerifyToken(id, Token([]byte("another key, thirty-two bytes!!"), id)) || v.VerifyToken(id, tok[:63]) {
			t.Fatalf("token of %s", id)
		}
	}
	if !v.VerifyDigest(KeyDigest(key)) || v.VerifyDigest(KeyDigest(key[1:])) || v.VerifyDigest("") {
		t.Fatal("digest")
	}
}
