package trace

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/mustard-sidecar/mustard-sidecar/snapshot"
)

// Redaction. A transcript must not hold a snapshot key, nor anything that
// proves a key (tokens), yet it must replay: every resume must fail or pass
// authentication exactly as it did. So the three authentication fields are
// replaced by markers that say what each value was relative to the keys
// the session saw, and the replayer (Restore) puts back values that stand
// in the same relation to keys of its own:
//
//	snapshot_key_base64  "redacted-key-<n>"     the session's n-th distinct key
//	                     "redacted-not-base64"  not valid base64 (stays invalid)
//	snapshot_key_digest  "redacted-digest-<n>"  the SHA-256 of key n
//	                     "redacted-digest-other" the digest of no key seen
//	snapshot_token       "redacted-token-<n>"   the HMAC under key n of the id it signs
//	                     "redacted-token-other" a token that authenticates nothing
//
// Key 1 is the pinned key (--snapshot-key-file) when there is one. A value
// of another JSON type becomes 0 (still not a string, so the same error).
// The fields are redacted where the contract puts them: at the top level,
// in "policy" and in "auth". A token signs policy.snapshot_id in "policy"
// and the top-level snapshot_id elsewhere, as the sidecar checks it.
//
// Seal keys (seal_key_base64, in "options", "policy" and "auth") are
// redacted too, numbered apart from snapshot keys:
//
//	seal_key_base64  "redacted-seal-key-<n>"   the session's n-th distinct seal key
//	                 "redacted-short-seal-key" base64 of a key too short to seal with
//	                 "redacted-not-base64"     not valid base64
//
// Sealed bytes depend on the seal key, so a session that sealed snapshots
// cannot replay byte for byte under a replay key: the replayer says so
// rather than report a difference (corpus.Replay).

const (
	keyMarker      = "redacted-key-"
	sealKeyMarker  = "redacted-seal-key-"
	shortSealKey   = "redacted-short-seal-key"
	notBase64      = "redacted-not-base64"
	digestMarker   = "redacted-digest-"
	tokenMarker    = "redacted-token-"
	otherSuffix    = "other"
	redactedNumber = "0"
)

// maxKeys bounds the keys a session's redaction tells apart; any further
// distinct key shares the last number (a replay of such a session may then
// differ).
const maxKeys = 1024

var authFields = []string{"snapshot_key_base64", "snapshot_key_digest", "snapshot_token", "seal_key_base64"}

// minSealKeyBytes is the shortest seal key the sidecar seals with
// (snapshot.MinSealKeyBytes).
const minSealKeyBytes = 32

// SealedMarker starts a redacted seal key in a transcript.
const SealedMarker = sealKeyMarker

// ReplayKey is the key a replay uses in place of the session's n-th key.
func ReplayKey(n int) []byte {
	sum := sha256.Sum256([]byte("mustard-sidecar trace replay key " + strconv.Itoa(n)))
	return sum[:]
}

// replaySealKey stands for the session's n-th seal key.
func replaySealKey(n int) []byte {
	sum := sha256.Sum256([]byte("mustard-sidecar trace replay seal key " + strconv.Itoa(n)))
	return sum[:]
}

// PinnedKeyArg stands for the path of --snapshot-key-file in a
// transcript's arguments: the replayer writes ReplayKey(1) to a file.
const PinnedKeyArg = keyMarker + "1"

// keyBook numbers the distinct keys a session has used.
type keyBook struct {
	numbers map[string]int // key bytes -> number
	digests map[string]int // hex digest -> number
	seals   map[string]int // seal key bytes -> number
}

func newKeyBook(pinned []byte) *keyBook {
	b := &keyBook{numbers: map[string]int{}, digests: map[string]int{}, seals: map[string]int{}}
	if pinned != nil {
		b.number(pinned)
	}
	return b
}

func (b *keyBook) number(key []byte) int {
	if n, ok := b.numbers[string(key)]; ok {
		return n
	}
	n := len(b.numbers) + 1
	if n > maxKeys {
		return maxKeys
	}
	b.numbers[string(key)] = n
	b.digests[hexSHA256(key)] = n
	return n
}

// The digest and token a host computes (the sidecar's own definitions).
var (
	hexSHA256 = snapshot.KeyDigest
	hexHMAC   = snapshot.Token
)

func (b *keyBook) sealNumber(key []byte) int {
	if n, ok := b.seals[string(key)]; ok {
		return n
	}
	n := len(b.seals) + 1
	if n > maxKeys {
		return maxKeys
	}
	b.seals[string(key)] = n
	return n
}

// member is one member of a JSON object: its key and the span of its
// value.
type member struct {
	key        string
	start, end int
}

// members lists the members of a JSON object in order.
func members(obj []byte) ([]member, error) {
	d := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, err
		}
		end := int(d.InputOffset())
		out = append(out, member{key: key, start: end - len(raw), end: end})
	}
	return out, nil
}

// lastString returns the last occurrence of key in ms as a string (the
// sidecar reads the last of repeated keys).
func lastString(obj []byte, ms []member, key string) (string, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].key == key {
			var s string
			if json.Unmarshal(obj[ms[i].start:ms[i].end], &s) != nil {
				return "", false
			}
			return s, true
		}
	}
	return "", false
}

// edit replaces obj[start:end].
type edit struct {
	start, end int
	with       []byte
}

func apply(obj []byte, edits []edit) []byte {
	if len(edits) == 0 {
		return obj
	}
	out := make([]byte, 0, len(obj))
	at := 0
	for _, e := range edits { // in order of start
		out = append(out, obj[at:e.start]...)
		out = append(out, e.with...)
		at = e.end
	}
	return append(out, obj[at:]...)
}

// containers visits the objects that hold authentication fields: the
// request itself, "options", "policy" and "auth". f returns the edits for one
// container, given its bytes, members and the snapshot id its token signs.
func containers(header []byte, f func(obj []byte, ms []member, signed string, hasSigned bool) []edit) ([]byte, error) {
	top, err := members(header)
	if err != nil {
		return nil, err
	}
	topID, hasTopID := lastString(header, top, "snapshot_id")
	var edits []edit
	for _, m := range top {
		if m.key != "policy" && m.key != "auth" && m.key != "options" {
			continue
		}
		sub := header[m.start:m.end]
		ms, err := members(sub)
		if err != nil {
			continue // not an object: the sidecar reports it
		}
		signed, hasSigned := topID, hasTopID
		if m.key == "policy" {
			signed, hasSigned = lastString(sub, ms, "snapshot_id")
		}
		for _, e := range f(sub, ms, signed, hasSigned) {
			edits = append(edits, edit{m.start + e.start, m.start + e.end, e.with})
		}
	}
	edits = append(edits, f(header, top, topID, hasTopID)...)
	sortEdits(edits)
	return apply(header, edits), nil
}

func sortEdits(es []edit) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].start < es[j-1].start; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

func isAuthField(k string) bool {
	for _, f := range authFields {
		if k == f {
			return true
		}
	}
	return false
}

func quoted(s string) []byte { return strconv.AppendQuote(nil, s) }

// redact replaces the authentication fields of one request header.
func (b *keyBook) redact(header []byte, pinned []byte) ([]byte, error) {
	return containers(header, func(obj []byte, ms []member, signed string, hasSigned bool) []edit {
		// The key the sidecar checks the token under: the pinned key, or
		// the (last) key sent.
		var sent []byte
		if s, ok := lastString(obj, ms, "snapshot_key_base64"); ok {
			if k, err := base64.StdEncoding.DecodeString(s); err == nil {
				sent = k
			}
		}
		ref := pinned
		if ref == nil {
			ref = sent
		}
		var edits []edit
		for _, m := range ms {
			if !isAuthField(m.key) {
				continue
			}
			raw := obj[m.start:m.end]
			var s string
			if string(raw) == "null" {
				continue
			}
			if json.Unmarshal(raw, &s) != nil {
				edits = append(edits, edit{m.start, m.end, []byte(redactedNumber)})
				continue
			}
			var with string
			switch m.key {
			case "snapshot_key_base64":
				with = notBase64
				if k, err := base64.StdEncoding.DecodeString(s); err == nil {
					with = keyMarker + strconv.Itoa(b.number(k))
				}
			case "snapshot_key_digest":
				with = digestMarker + otherSuffix
				if sent != nil {
					b.number(sent) // a digest of the key sent with it is known
				}
				if n, ok := b.digests[s]; ok {
					with = digestMarker + strconv.Itoa(n)
				}
			case "snapshot_token":
				with = tokenMarker + otherSuffix
				if ref != nil && hasSigned && hmac.Equal([]byte(s), []byte(hexHMAC(ref, signed))) {
					with = tokenMarker + strconv.Itoa(b.number(ref))
				}
			case "seal_key_base64":
				with = notBase64
				if k, err := base64.StdEncoding.DecodeString(s); err == nil {
					with = shortSealKey
					if len(k) >= minSealKeyBytes {
						with = sealKeyMarker + strconv.Itoa(b.sealNumber(k))
					}
				}
			}
			edits = append(edits, edit{m.start, m.end, quoted(with)})
		}
		return edits
	})
}

// Restore puts replay values back in place of the markers of a redacted
// request header (see the package comment); anything else stays as it is.
func Restore(header []byte) ([]byte, error) {
	return containers(header, func(obj []byte, ms []member, signed string, hasSigned bool) []edit {
		var edits []edit
		for _, m := range ms {
			if !isAuthField(m.key) {
				continue
			}
			var s string
			if json.Unmarshal(obj[m.start:m.end], &s) != nil {
				continue
			}
			var with string
			switch {
			case strings.HasPrefix(s, sealKeyMarker):
				if n, err := strconv.Atoi(s[len(sealKeyMarker):]); err == nil {
					with = base64.StdEncoding.EncodeToString(replaySealKey(n))
				}
			case s == shortSealKey:
				with = base64.StdEncoding.EncodeToString(make([]byte, minSealKeyBytes/2))
			case strings.HasPrefix(s, keyMarker):
				if n, err := strconv.Atoi(s[len(keyMarker):]); err == nil {
					with = base64.StdEncoding.EncodeToString(ReplayKey(n))
				}
			case s == digestMarker+otherSuffix:
				with = hexSHA256([]byte("a digest of no replay key"))
			case strings.HasPrefix(s, digestMarker):
				if n, err := strconv.Atoi(s[len(digestMarker):]); err == nil {
					with = hexSHA256(ReplayKey(n))
				}
			case s == tokenMarker+otherSuffix:
				with = strings.Repeat("0", 64)
			case strings.HasPrefix(s, tokenMarker):
				if n, err := strconv.Atoi(s[len(tokenMarker):]); err == nil && hasSigned {
					with = hexHMAC(ReplayKey(n), signed)
				}
			}
			if with != "" {
				edits = append(edits, edit{m.start, m.end, quoted(with)})
			}
		}
		return edits
	})
}
