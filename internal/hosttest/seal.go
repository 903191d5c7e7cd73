package hosttest

import (
	"strings"
	"testing"
)

// The sealed-snapshot fixtures of the host and host/durable tests.

// SealKeyBytes is the seal key the tests seal under.
const SealKeyBytes = "seal-key-for-tests-0123456789abcdef"

// Distinctive strings a guest gets as an input and as answers: sealed
// bytes must not show them, plain bytes do.
const (
	SecretInput  = "ZEBRA-INPUT-7Q3X"
	SecretAnswer = "OKAPI-ANSWER-K9W2"
)

// SealSource looks up twice; SealResult is what it returns when the
// lookup with sequence number seq answers {note: LookupNote(seq)}.
const (
	SealSource = `
const a = lookup(secret);
const b = lookup(a.note);
[secret, a.note, b.note].join("|");
`
	SealResult = SecretInput + "|" + SecretAnswer + "-a|" + SecretAnswer + "-b"
)

// SealLoopSource looks up four times, each time with the last note;
// SealLoopResult is what it returns under the same answers.
const (
	SealLoopSource = `
let note = secret;
const seen = [secret];
for (let i = 0; i < 4; i++) { note = lookup(note).note; seen.push(note); }
seen.join("|");
`
	SealLoopResult = SecretInput + "|" + SecretAnswer + "-a|" + SecretAnswer + "-b|" + SecretAnswer + "-c|" + SecretAnswer + "-d"
)

// LookupNote is the note the lookup with sequence number seq answers.
func LookupNote(seq int) string { return SecretAnswer + "-" + string(rune('a'+seq)) }

// RequireSealed checks that snap is sealed bytes showing neither the
// guest's input nor any answer, nor the capability's name.
func RequireSealed(t testing.TB, snap []byte) {
	t.Helper()
	s := string(snap)
	switch {
	case len(snap) == 0:
		t.Fatal("no snapshot bytes")
	case !strings.Contains(s, "mustard-sealed-snapshot"):
		t.Fatal("the snapshot is not sealed")
	case strings.Contains(s, SecretInput), strings.Contains(s, SecretAnswer):
		t.Fatal("the sealed snapshot shows the guest's input or an answer")
	case strings.Contains(s, "lookup"):
		t.Fatal("the sealed snapshot shows the capability's name")
	}
}
