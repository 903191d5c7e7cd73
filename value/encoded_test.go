package value

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"
)

// fromEncoded builds the value an Encoded reads, as DecodeCBOR would.
func fromEncoded(t *testing.T, e *Encoded) Value {
	t.Helper()
	it, err := e.Next()
	if err != nil {
		t.Fatal(err)
	}
	switch it.Kind {
	case KindArray:
		v := Value{Kind: KindArray}
		for range it.Len {
			v.Elems = append(v.Elems, fromEncoded(t, e))
		}
		return v
	case KindObject:
		v := Value{Kind: KindObject}
		for range it.Len {
			k, err := e.Key()
			if err != nil {
				t.Fatal(err)
			}
			v.Members = append(v.Members, Member{Key: k, Value: fromEncoded(t, e)})
		}
		return v
	}
	return Value{Kind: it.Kind, Bool: it.Bool, Num: it.Num, Str: it.Str}
}

// checkEncoded: reading enc item by item gives what DecodeCBOR gives.
func checkEncoded(t *testing.T, enc []byte, want Value) {
	t.Helper()
	for _, e := range []*Encoded{NewEncoded(enc, false), NewEncoded(enc, true), NewEncodedView(enc)} {
		// Canonical encodings are equal exactly when the values are (NaN
		// included, which DeepEqual would not match).
		if got := fromEncoded(t, e); !bytes.Equal(got.AppendCBOR(nil), want.AppendCBOR(nil)) || !e.Done() {
			t.Fatalf("Encoded(%x) reads %v (done %v), want %v", enc, got, e.Done(), want)
		}
	}
}

func TestEncodedReadsWhatDecodeCBORDecodes(t *testing.T) {
	for _, v := range []Value{
		Undefined(), Null(), Bool(true), Bool(false), Number(-0.5), String(""), String("héllo \xed\xa0\x80"),
		Array(), Array(Number(1), Hole(), Object(Member{Key: "", Value: Null()})),
		Object(), Object(Member{Key: "a", Value: Array(String("x"), Array(Bool(true)))}, Member{Key: "b\xed\xb0\x80", Value: Number(2)}),
	} {
		enc := v.AppendCBOR(nil)
		want, _, err := DecodeCBOR(enc)
		if err != nil {
			t.Fatal(err)
		}
		checkEncoded(t, enc, want)
	}
	for _, bad := range [][]byte{nil, {0x82, 0xf6}, {0x5a, 0xff, 0xff, 0xff, 0xff}, {0xfb, 1, 2}, {0xa1, 0xf6, 0xf6}, {0xe1}} {
		e := NewEncoded(bad, false)
		var err error
		for {
			var it Item
			if it, err = e.Next(); err == nil && it.Kind == KindObject {
				_, err = e.Key()
			}
			if err != nil || e.Done() {
				break
			}
		}
		if err == nil {
			t.Errorf("Encoded read %x without an error", bad)
		}
	}
}

// Only a string that is most of an owned encoding shares its memory: a
// short one kept from a large answer must not keep the answer.
func TestOwnedStringsShareOnlyWhenMostOfTheBytes(t *testing.T) {
	long := strings.Repeat("x", 1000)
	for _, c := range []struct {
		v     Value
		share bool
	}{
		{String(long), true},
		{Array(String(long), String("short")), true},
		{Object(M("title", String("short")), M("body", String(long))), true},
		{Array(String("short"), String(long[:400]), String(long[:400])), false},
	} {
		enc := c.v.AppendCBOR(nil)
		inside := func(s string) bool {
			p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
			start := uintptr(unsafe.Pointer(&enc[0]))
			return p >= start && p < start+uintptr(len(enc))
		}
		e := NewEncoded(enc, true)
		var strs []string
		var walk func()
		walk = func() {
			it, err := e.Next()
			if err != nil {
				t.Fatal(err)
			}
			switch it.Kind {
			case KindString:
				strs = append(strs, it.Str)
			case KindArray:
				for range it.Len {
					walk()
				}
			case KindObject:
				for range it.Len {
					k, err := e.Key()
					if err != nil {
						t.Fatal(err)
					}
					strs = append(strs, k)
					walk()
				}
			}
		}
		walk()
		d, _, err := DecodeCBOROwned(enc)
		if err != nil {
			t.Fatal(err)
		}
		var decoded []string
		var collect func(v Value)
		collect = func(v Value) {
			switch v.Kind {
			case KindString:
				decoded = append(decoded, v.Str)
			case KindArray:
				for _, el := range v.Elems {
					collect(el)
				}
			case KindObject:
				for _, m := range v.Members {
					decoded = append(decoded, m.Key)
					collect(m.Value)
				}
			}
		}
		collect(d)
		for _, list := range [][]string{strs, decoded} {
			for _, s := range list {
				if want := c.share && len(s) == len(long); inside(s) != want {
					t.Errorf("%s: %d-byte string shares the encoding: %v, want %v", c.v, len(s), inside(s), want)
				}
			}
		}
	}
}
