package seal

import (
	"bytes"
	"testing"
)

func TestBoxOpensOnlyWhatItSealedForTheSameAssociatedData(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	b, err := New(key, "test v1 encryption")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := b.Seal([]byte("head:"), []byte("plaintext"), []byte("ad"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(sealed, []byte("head:")) || len(sealed) != len("head:")+len("plaintext")+Overhead {
		t.Fatalf("sealed box has the wrong shape: %d bytes", len(sealed))
	}
	box := sealed[len("head:"):]
	plain, err := b.Open(nil, box, []byte("ad"))
	if err != nil || string(plain) != "plaintext" {
		t.Fatalf("Open = %q, %v", plain, err)
	}
	other, err := New(key, "test v1 other purpose")
	if err != nil {
		t.Fatal(err)
	}
	altered := append([]byte(nil), box...)
	altered[len(altered)-1] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"other ad":      func() ([]byte, error) { return b.Open(nil, box, []byte("da")) },
		"other purpose": func() ([]byte, error) { return other.Open(nil, box, []byte("ad")) },
		"altered":       func() ([]byte, error) { return b.Open(nil, altered, []byte("ad")) },
		"truncated":     func() ([]byte, error) { return b.Open(nil, box[:Overhead-1], []byte("ad")) },
	} {
		if _, err := open(); err != ErrOpen {
			t.Errorf("%s: err = %v, want ErrOpen", name, err)
		}
	}
	n := bytes.Repeat([]byte{7}, NonceSize)
	if x, y := b.SealWithNonce(nil, n, []byte("p"), nil), b.SealWithNonce(nil, n, []byte("p"), nil); !bytes.Equal(x, y) {
		t.Error("a given nonce seals deterministically")
	}
}
