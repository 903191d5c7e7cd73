package wire

import "testing"

// The token and digest are the standard constructions: RFC 4231's test
// case 2 for HMAC-SHA256, FIPS 180-2's "abc" for SHA-256.
func TestTokenAndDigest(t *testing.T) {
	if got := Token([]byte("Jefe"), "what do ya want for nothing?"); got != "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" {
		t.Fatalf("Token = %s", got)
	}
	if got := KeyDigest([]byte("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("KeyDigest = %s", got)
	}
}

// A chunk of raw bytes with its request around it fits the limit in
// either transport.
func TestChunksFitARequest(t *testing.T) {
	const header = 4 << 10 // far more than a stage request's header
	if MaxFetchBytes+header > MaxRequestBytes {
		t.Fatal("a binary chunk does not fit a request")
	}
	if (MaxJSONLChunk+2)/3*4+header > MaxRequestBytes {
		t.Fatal("a JSONL chunk in base64 does not fit a line")
	}
}
