package host

import (
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's worked exchange.
func TestKeyDigestAndToken(t *testing.T) {
	k, err := NewKey([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	require.Equal(t, "3eb1bd439947eb762998e566ccc2e099c791118b2f40579cc4f7da2b5061b7f9", k.Digest())
	require.Equal(t, "124a6d7b8b9a011371cbbee33cf4288b11266151a7a05c7a07de0cf1d05c08cd",
		k.Token("407a30137b6d766ab88b480efd8e0daa5dde3583c605ffee1a9a7ff82cdf034e"))
}

func TestKeyNeverPrintsItself(t *testing.T) {
	k, err := GenerateKey()
	require.NoError(t, err)
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s", k, k, k, k)} {
		require.NotContains(t, s, fmt.Sprintf("%x", k.Bytes()))
		require.Contains(t, s, k.Digest()[:16])
	}
	b := k.Bytes()
	b[0] ^= 1
	require.NotEqual(t, b, k.Bytes(), "Bytes returns a copy")
}

func TestNewKeyRefusesShortKeys(t *testing.T) {
	_, err := NewKey(make([]byte, 31))
	require.EqualError(t, err, "snapshot key must be at least 32 bytes, got 31")
	require.True(t, Key{}.IsZero())
}

func TestSealKeyRefusesShortKeysAndNeverPrintsItself(t *testing.T) {
	_, err := NewSealKey(make([]byte, 31))
	require.EqualError(t, err, "seal key must be at least 32 bytes, got 31")
	require.True(t, SealKey{}.IsZero())
	require.Equal(t, "", SealKey{}.wire(), "the zero key sends nothing")

	k, err := GenerateSealKey()
	require.NoError(t, err)
	require.False(t, k.IsZero())
	require.Len(t, k.Bytes(), MinSealKeyBytes)
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s", k, k, k, k)} {
		require.NotContains(t, s, fmt.Sprintf("%x", k.Bytes()))
		require.NotContains(t, s, k.wire())
		require.Contains(t, s, "host.SealKey(sha256:")
	}
	b := k.Bytes()
	b[0] ^= 1
	require.NotEqual(t, b, k.Bytes(), "Bytes returns a copy")

	long := make([]byte, 64)
	long[63] = 7
	k2, err := NewSealKey(long)
	require.NoError(t, err)
	long[63] = 8
	require.Equal(t, byte(7), k2.Bytes()[63], "NewSealKey keeps a copy")
	require.Equal(t, base64.StdEncoding.EncodeToString(k2.Bytes()), k2.wire())
}
