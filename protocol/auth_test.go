package protocol_test

import (
	"encoding/base64"
	"testing"

	"github.com/mustard-sidecar/mustard-sidecar/protocol"
)

// The session keeps the last key's verifier: a resume under another key
// is checked against that key, and the first key still works after it.
func TestAuthenticationFollowsTheSentKey(t *testing.T) {
	c := newSess(t, false, protocol.Options{})
	other := []byte("another snapshot key, 32 bytes!!")
	authWith := func(key []byte, signing []byte, id string) map[string]any {
		return map[string]any{
			"snapshot_key_base64": base64.StdEncoding.EncodeToString(key),
			"snapshot_key_digest": sha256Hex(key),
			"snapshot_token":      hexHMAC(signing, id),
		}
	}
	st := c.startThree("")
	id, pol := st.str("snapshot_id"), st.str("policy_id")
	resume := func(a map[string]any) reply {
		return c.call("resume", nil, "", "snapshot_id", id, "policy_id", pol, "auth", a, "payload", numPayload(1))
	}
	// Refused resumes leave the execution parked.
	c.fail(resume(authWith(testKey, other, id)), "raw snapshot restore rejected a tampered or unauthenticated snapshot")
	c.fail(resume(authWith(other, testKey, id)), "raw snapshot restore rejected a tampered or unauthenticated snapshot")
	c.fail(resume(map[string]any{"snapshot_key_base64": base64.StdEncoding.EncodeToString(other), "snapshot_key_digest": sha256Hex(testKey), "snapshot_token": hexHMAC(testKey, id)}),
		"raw snapshot restore rejected a mismatched snapshot key digest")
	c.must(resume(authWith(other, other, id)))
	st = c.startThree("")
	id, pol = st.str("snapshot_id"), st.str("policy_id")
	c.fail(resume(authWith(other, testKey, id)), "raw snapshot restore rejected a tampered or unauthenticated snapshot")
	c.must(resume(authWith(testKey, testKey, id)))
}
