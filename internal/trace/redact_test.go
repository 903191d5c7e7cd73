package trace

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// verdict is what the sidecar's authentication step says of one container
// (contract step 3, with or without a pinned key).
func verdict(c map[string]any, signed string, pinned []byte) string {
	keyB64, hasKey := c["snapshot_key_base64"].(string)
	digest, hasDigest := c["snapshot_key_digest"].(string)
	token, hasToken := c["snapshot_token"].(string)
	switch {
	case !hasKey && pinned == nil:
		return "requires key"
	case !hasToken:
		return "requires token"
	case !hasDigest:
		return "requires digest"
	}
	key := pinned
	if hasKey {
		sent, err := base64.StdEncoding.DecodeString(keyB64)
		if err != nil {
			return "not base64"
		}
		if hexSHA256(sent) != digest {
			return "mismatched digest"
		}
		if key == nil {
			key = sent
		}
	}
	if pinned != nil && hexSHA256(pinned) != digest {
		return "mismatched digest"
	}
	if hexHMAC(key, signed) != token {
		return "tampered"
	}
	return "ok"
}

// Redacting a request and restoring it with the replay keys leaves every
// authentication verdict as it was, for every mix of keys, digests and
// tokens (right, of another key the session used, of a key it never saw,
// malformed, missing), with and without a pinned key; and the redacted
// request holds no key, digest or token.
func TestRedactRestoreKeepsVerdicts(t *testing.T) {
	keys := [][]byte{[]byte("key one, 32 bytes long..........."), []byte("key two, 32 bytes long..........."), []byte("a key the session never sent....")}
	const sid = "5f2c4c6d8c7a1bf6e0f3c2d1a9b8e7d6c5b4a3928170615243f5e6d7c8b9a0f1"
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(of ...func() (string, bool)) (string, bool) { return of[rng.IntN(len(of))]() }
	keyOf := func(k []byte) func() (string, bool) {
		return func() (string, bool) { return base64.StdEncoding.EncodeToString(k), true }
	}
	digestOf := func(k []byte) func() (string, bool) { return func() (string, bool) { return hexSHA256(k), true } }
	tokenOf := func(k []byte, id string) func() (string, bool) {
		return func() (string, bool) { return hexHMAC(k, id), true }
	}
	absent := func() (string, bool) { return "", false }
	junk := func() (string, bool) { return "***", true }
	for _, pinned := range [][]byte{nil, keys[0]} {
		book := newKeyBook(pinned)
		for i := 0; i < 2000; i++ {
			c := map[string]any{}
			if v, ok := pick(keyOf(keys[0]), keyOf(keys[1]), keyOf(keys[2]), absent, junk); ok {
				c["snapshot_key_base64"] = v
			}
			if v, ok := pick(digestOf(keys[0]), digestOf(keys[1]), digestOf(keys[2]), absent, junk); ok {
				c["snapshot_key_digest"] = v
			}
			if v, ok := pick(tokenOf(keys[0], sid), tokenOf(keys[1], sid), tokenOf(keys[2], sid), tokenOf(keys[0], "other id"), absent, junk); ok {
				c["snapshot_token"] = v
			}
			for _, where := range []string{"auth", "policy"} {
				req := map[string]any{"protocol_version": 2, "id": i, "method": "resume", "snapshot_id": sid}
				inner := map[string]any{}
				for k, v := range c {
					inner[k] = v
				}
				if where == "policy" {
					inner["snapshot_id"] = sid
				}
				req[where] = inner
				header, _ := json.Marshal(req)
				redacted, err := book.redact(header, pinned)
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range keys {
					for _, secret := range []string{base64.StdEncoding.EncodeToString(k), hexSHA256(k), hexHMAC(k, sid)} {
						if bytes.Contains(redacted, []byte(secret)) {
							t.Fatalf("%s holds %s", redacted, secret)
						}
					}
				}
				restored, err := Restore(redacted)
				if err != nil {
					t.Fatal(err)
				}
				var back map[string]any
				if err := json.Unmarshal(restored, &back); err != nil {
					t.Fatalf("%s: %v", restored, err)
				}
				var replayPinned []byte
				if pinned != nil {
					replayPinned = ReplayKey(1)
				}
				want := verdict(inner, sid, pinned)
				got := verdict(back[where].(map[string]any), sid, replayPinned)
				if got != want {
					t.Fatalf("pinned %t, %s\noriginal %s: %s\nredacted %s\nrestored %s: %s", pinned != nil, where, header, want, redacted, restored, got)
				}
			}
		}
	}
}

// Only the authentication fields of the request, "policy" and "auth" are
// touched; inputs, values and other objects that happen to use the same
// names are guest data and stay as they are, byte for byte.
func TestRedactTouchesOnlyAuthFields(t *testing.T) {
	book := newKeyBook(nil)
	header := []byte(`{"protocol_version":2, "id":1,"method":"start","options":{"inputs":{"snapshot_token":{"String":"guest data"}}},` +
		`"payload":{"type":"value","value":{"Object":{"snapshot_key_base64":{"String":"also data"}}}},"snapshot_token":"top"}`)
	got, err := book.redact(header, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Replace(header, []byte(`"snapshot_token":"top"`), []byte(`"snapshot_token":"redacted-token-other"`), 1)
	if !bytes.Equal(got, want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	back, err := Restore(got)
	if err != nil || !bytes.Contains(back, []byte(`"guest data"`)) || !bytes.Contains(back, []byte(`"also data"`)) {
		t.Fatalf("restore: %s %v", back, err)
	}
}

// Repeated keys are all redacted: a host may send the same field twice.
func TestRedactRepeatedFields(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	k := base64.StdEncoding.EncodeToString(key)
	header := []byte(fmt.Sprintf(`{"auth":{"snapshot_key_base64":%q,"snapshot_key_base64":%q}}`, k, k))
	got, err := newKeyBook(nil).redact(header, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(got, []byte(k)) {
		t.Fatalf("%s", got)
	}
}

// Seal keys are redacted wherever a request carries them, numbered apart
// from snapshot keys, keeping whether they were base64 and long enough;
// restored, each is a key of the same kind.
func TestRedactSealKeys(t *testing.T) {
	seal := []byte("the host's seal key, 32 bytes or more")
	short := []byte("too short")
	b64 := base64.StdEncoding.EncodeToString
	header := []byte(fmt.Sprintf(`{"options":{"seal_key_base64":%q},"policy":{"seal_key_base64":%q},"auth":{"seal_key_base64":"***"},"seal_key_base64":%q}`,
		b64(seal), b64(short), b64(seal)))
	got, err := newKeyBook(nil).redact(header, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"options":{"seal_key_base64":"redacted-seal-key-1"},"policy":{"seal_key_base64":"redacted-short-seal-key"},"auth":{"seal_key_base64":"redacted-not-base64"},"seal_key_base64":"redacted-seal-key-1"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	back, err := Restore(got)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Options, Policy, Auth struct {
			Seal string `json:"seal_key_base64"`
		}
	}
	if err := json.Unmarshal(back, &r); err != nil {
		t.Fatal(err)
	}
	long, err1 := base64.StdEncoding.DecodeString(r.Options.Seal)
	shortBack, err2 := base64.StdEncoding.DecodeString(r.Policy.Seal)
	_, err3 := base64.StdEncoding.DecodeString(r.Auth.Seal)
	if err1 != nil || len(long) < minSealKeyBytes || err2 != nil || len(shortBack) >= minSealKeyBytes || err3 == nil {
		t.Fatalf("restored %s", back)
	}
}

func TestNormalizeProfile(t *testing.T) {
	in := []byte(`{"id":1,"ok":true,"result":{},"profile":{"execution_ns":123,"response_prepare_ns":45,"instructions":6}}`)
	want := `{"id":1,"ok":true,"result":{},"profile":{"execution_ns":0,"response_prepare_ns":0,"instructions":6}}`
	if got := NormalizeProfile(in); string(got) != want {
		t.Fatalf("%s", got)
	}
	if got := NormalizeProfile([]byte(`{"ok":false}`)); string(got) != `{"ok":false}` {
		t.Fatalf("%s", got)
	}
}
