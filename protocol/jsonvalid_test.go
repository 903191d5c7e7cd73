package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/internal/jsonscan"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
	"github.com/mustard-sidecar/mustard-sidecar/value"
)

var validJSONCases = []string{
	``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `01`, `1.`, `.5`, `1e`, `1e+`, `1E-2`, `-`, `--1`, `1.5e3`,
	`true`, `tru`, `truex`, `null`, `nul`, `false`, `falsy`,
	`{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":[1,2,{"b":null}],"c":"d"}`,
	`[1,2,]`, `[,1]`, `[1 2]`, `[[[[]]]]`, `[[[[]]]`, `[]]`, `{}}`, `{"a":}`, `{"a"}`, `{,}`,
	`"\u00e9\n\t\"\\\/\b\f\r"`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01\"", `"unterminated`, `"\`,
	" {\"id\" : 1 , \"method\" : \"ping\" } \r\n", `{"id":1}x`, `1 2`, `[1]  [2]`,
	"\"\xff\"", "\"\xed\xa0\x80\"", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "\"\xef\xbf\xbd\"", "\"\xe2\x82\"", "\"\xc0\xaf\"", "{\"k\xff\":1}", "[\"ok\", \"\xf4\x90\x80\x80\"]", "\xef\xbb\xbf{}",
	`{"a":{"b":{"c":[true,false,null,-1.25E+10]}}}`,
	strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
	strings.Repeat("[", 100000) + strings.Repeat("]", 99999),
	strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000),
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 9999) + "{}" + strings.Repeat("]", 9999),
	strings.Repeat("[", 10000) + "{}" + strings.Repeat("]", 10000),
}

func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validJSONCases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)) && utf8.ValidString(c); got != want {
			t.Errorf("validJSON(%.60q) = %v, encoding/json and utf8 say %v", c, got, want)
		}
	}
}

// FuzzValidJSON: validJSON accepts exactly what encoding/json.Valid and
// utf8.Valid together do.
func FuzzValidJSON(f *testing.F) {
	for _, c := range validJSONCases {
		if len(c) < 1000 {
			f.Add([]byte(c))
		}
	}
	for _, c := range append(splitCases, payloadCases...) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b) && utf8.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json and utf8 say %v", b, got, want)
		}
		checkValidObject(t, b)
	})
}

// splitCases are objects whose members validObject must report as
// splitObject finds them.
var splitCases = []string{
	`{}`, ` { } `, `{"a":1}`, ` {"a" : 1 , "b":[1,{"c":2}], "d":{} ,"e":[]} `,
	`{"a":1,"a":2}`, `{"a\u0062":"x","ab":"y"}`, `{"":""}`, `{"a":{"a":{"a":1}},"b":"}"}`,
	`{"s":"\"{[","t":true,"f":false,"n":null,"x":-1.5e3}`, `[{"a":1}]`, `"{}"`, `{"a":1}x`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":33}`,
}

// checkValidObject: validObject accepts what validJSON accepts, and for an
// object gives the fields splitObject gives.
func checkValidObject(t *testing.T, b []byte) {
	t.Helper()
	f, isObject, valid := validObject(b)
	if valid != validJSON(b) {
		t.Fatalf("validObject(%q): valid %v, validJSON %v", b, valid, !valid)
	}
	if !valid {
		return
	}
	want, err := splitObject(b)
	if isObject != (err == nil) {
		t.Fatalf("validObject(%q): object %v, splitObject says %v", b, isObject, err)
	}
	if !isObject {
		return
	}
	if len(f) != len(want) {
		t.Fatalf("validObject(%q) = %q, splitObject %q", b, show(f), show(want))
	}
	for i := range f {
		if f[i].key != want[i].key || string(f[i].raw) != string(want[i].raw) {
			t.Fatalf("validObject(%q) = %q, splitObject %q", b, show(f), show(want))
		}
	}
	checkSplitPayload(t, b, want)
	// A payload object and a batch's answers the validator split on its
	// way split as splitPayload and splitObject do.
	for _, fl := range f {
		checkSplitOnTheWay(t, b, fl)
	}
}

// checkSplitOnTheWay: a top-level member of the header b read on the
// validator's way is the member the request decoder would split, and
// splits as the decoder would split it.
func checkSplitOnTheWay(t *testing.T, b []byte, fl field) {
	t.Helper()
	isPayload := fl.key == wire.FieldPayload && bytes.HasPrefix(fl.raw, []byte("{"))
	isAnswers := fl.key == wire.FieldAnswers && bytes.HasPrefix(fl.raw, []byte("["))
	if (fl.split != nil) != (isPayload || isAnswers) {
		t.Fatalf("validObject(%q): member %q read on the way: %v", b, fl.key, fl.split != nil)
	}
	switch {
	case isPayload:
		sub, err := splitObject(fl.raw)
		if err != nil || fl.split.payload == nil {
			t.Fatalf("validObject(%q): payload %v, split %v", b, err, fl.split.payload)
		}
		checkPayloadFields(t, fl.raw, *fl.split.payload, sub)
	case isAnswers:
		var want [][]byte
		jsonscan.Elements(fl.raw, func(el []byte) bool { want = append(want, el); return true })
		if len(fl.split.answers) != len(want) {
			t.Fatalf("validObject(%q): %d answers read, %d elements", b, len(fl.split.answers), len(want))
		}
		for k, a := range fl.split.answers {
			if string(a.raw) != string(want[k]) {
				t.Fatalf("validObject(%q): answer %d is %q, element %q", b, k, a.raw, want[k])
			}
			sub, err := splitObject(a.raw)
			if (err == nil) != (a.f != nil) {
				t.Fatalf("validObject(%q): answer %d split %v, splitObject %v", b, k, a.f != nil, err)
			}
			if a.f == nil {
				continue
			}
			if len(a.f) != len(sub) {
				t.Fatalf("validObject(%q): answer %d = %q, splitObject %q", b, k, show(a.f), show(sub))
			}
			for m := range sub {
				if a.f[m].key != sub[m].key || string(a.f[m].raw) != string(sub[m].raw) {
					t.Fatalf("validObject(%q): answer %d = %q, splitObject %q", b, k, show(a.f), show(sub))
				}
				if a.f[m].split != nil {
					checkSplitOnTheWay(t, b, a.f[m])
				}
			}
		}
	}
}

// show is fields as text, for messages.
func show(f fields) []string {
	var out []string
	for _, fl := range f {
		out = append(out, fl.key+"="+string(fl.raw))
	}
	return out
}

// checkSplitPayload: splitPayload splits b as splitObject does (want),
// and its value member reads as TranscodeJSON reads it.
func checkSplitPayload(t *testing.T, b []byte, want fields) {
	t.Helper()
	p, err := splitPayload(b)
	if err != nil {
		t.Fatalf("splitPayload(%q): %v", b, err)
	}
	checkPayloadFields(t, b, p, want)
}

// checkPayloadFields: p, the payload object b split, has the fields
// splitObject finds (want), and its value member reads as TranscodeJSON
// reads it.
func checkPayloadFields(t *testing.T, b []byte, p payloadFields, want fields) {
	t.Helper()
	if len(p.fields) != len(want) {
		t.Fatalf("splitPayload(%q) = %q; splitObject %q", b, show(p.fields), show(want))
	}
	for i := range want {
		if p.fields[i].key != want[i].key || string(p.fields[i].raw) != string(want[i].raw) {
			t.Fatalf("splitPayload(%q) = %q, splitObject %q", b, show(p.fields), show(want))
		}
	}
	raw, ok := want.get(wire.FieldValue)
	if !ok {
		return
	}
	enc, err := p.value()
	wantEnc, wantErr := value.TranscodeJSON(raw)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(enc, wantEnc) {
		t.Fatalf("splitPayload(%q): value %x, %v; TranscodeJSON %x, %v", b, enc, err, wantEnc, wantErr)
	}
}

// payloadCases are payloads whose value member splitPayload reads in its
// walk, or must read again: repeated, spelled with escapes, not a
// structured value, among other members.
var payloadCases = []string{
	`{"type":"value","value":{"String":"a\"b\\c\u00e9"}}`,
	`{"value":{"Number":{"Finite":1.5}} , "type" : "value"}`,
	`{"type":"value","value":{"String":"first"},"value":{"String":"last"}}`,
	`{"type":"value","value":{"String":"read"},"valu\u0065":{"String":"counts"}}`,
	`{"type":"value","valu\u0065":{"String":"first"},"value":{"String":"counts"}}`,
	`{"type":"value","value":{"Strin":"x"}}`,
	`{"type":"value","value":{"String":"bad"},"value":"Null"}`,
	`{"type":"value","value":"Null","value":{"Array":[{"String":1}]}}`,
	`{"type":"value","value":{"Array":["Null",{"Bool":true},"Hole"]},"extra":[1,{"value":2}]}`,
	`{"type":"error","error":{"name":"E","message":"m"},"value":"Undefined"}`,
	`{"type":"value","value":  "Undefined"  }`,
}

func TestSplitPayloadSplitsAsSplitObject(t *testing.T) {
	for _, c := range append(append(payloadCases, splitCases...), validJSONCases...) {
		checkValidObject(t, []byte(c))
	}
}

// A request header's payload is validated and split in the validator's
// pass, its value transcoded there: valid headers whatever the value is,
// invalid JSON in any part of the payload refused.
func TestValidObjectReadsThePayload(t *testing.T) {
	for _, p := range payloadCases {
		for _, h := range []string{
			`{"id":1,"answers":[{"call_id":1,"payload":` + p + `},7,{"payload":` + p + `,"call_id":2,"payload":` + p + `}],"payload":` + p + `}`,
			`{"answers":[]}`,
			`{"answers":[{"payload":"x"},{"payload":[` + p + `]},{}]}`,
			`{"id":1,"payload":` + p + `}`,
			`{"payload":` + p + `,"id":1}`,
			`{"payload":"x","payload":` + p + `}`,
			`{"payload":` + p + `,"payload":[1]}`,
			` { "payload" : ` + p + ` } `,
		} {
			if !validJSON([]byte(h)) {
				t.Fatalf("%.200s: not valid", h)
			}
			checkValidObject(t, []byte(h))
		}
	}
	// At encoding/json's nesting bound, on either side of it.
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		h     string
		valid bool
	}{
		{`{"payload":{"value":` + deep(maxJSONDepth-2) + `}}`, true},
		{`{"payload":{"value":` + deep(maxJSONDepth-1) + `}}`, false},
		{`{"answers":[{"payload":{"value":` + deep(maxJSONDepth-4) + `}}]}`, true},
		{`{"answers":[{"payload":{"value":` + deep(maxJSONDepth-3) + `}}]}`, false},
		{`{"answers":[{"call_id":` + deep(maxJSONDepth-3) + `}]}`, true},
		{`{"answers":[{"call_id":` + deep(maxJSONDepth-2) + `}]}`, false},
		{`{"answers":[` + deep(maxJSONDepth-2) + `]}`, true},
		{`{"answers":[` + deep(maxJSONDepth-1) + `]}`, false},
	} {
		if _, _, valid := validObject([]byte(c.h)); valid != c.valid || json.Valid([]byte(c.h)) != c.valid {
			t.Errorf("%.60q: valid %v, encoding/json %v, want %v", c.h, valid, json.Valid([]byte(c.h)), c.valid)
		}
		if c.valid {
			checkValidObject(t, []byte(c.h))
		}
	}
	for _, h := range []string{
		`{"payload":{"type":"value","value":{"String":"x"}}`,
		`{"payload":{"type":"value","value":{"String":"x"},}}`,
		`{"payload":{"type":"value","value":{"String":"x\q"}}}`,
		`{"payload":{"type":"value","value":{"Strin":"x\q"}}}`,
		`{"payload":{"type":"value","value":{"Strin":[1,]}}}`,
		`{"payload":{"type":"value","value":"Null" "x":1}}`,
		`{"payload":{"type":"value","value":{"String":"\ud800\u"}}}`,
		"{\"payload\":{\"type\":\"value\",\"value\":{\"String\":\"\xff\"}}}",
		"{\"payload\":{\"type\":\"value\",\"value\":{\"Strin\":\"\xff\"}}}",
		`{"payload":{"type":"value","value":` + strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth) + `}}`,
		`{"payload":{"value":{"String":"x"}`,
		`{"payload":{"value"}}`,
		`{"answers":[{"call_id":1,"payload":{"type":"value","value":{"String":"x"}}},]}`,
		`{"answers":[{"call_id":1,"payload":{"type":"value","value":{"Strin":[1,]}}}]}`,
		`{"answers":[{"call_id":1,"payload":{"type":"value","value":"Null"},}]}`,
		`{"answers":[{"call_id":1 "payload":1}]}`,
		`{"answers":[1 2]}`,
		`{"answers":[`,
		`{"answers":[{"payload":{"value":` + strings.Repeat("[", maxJSONDepth-3) + strings.Repeat("]", maxJSONDepth-3) + `}}]}`,
		`{"payload":{"value":` + strings.Repeat("[", maxJSONDepth-1) + strings.Repeat("]", maxJSONDepth-1) + `}}`,
		`{"payload":{"type":[1,],"value":"Null"}}`,
		`{"payload":{"type":"value","value":"Null","error":{"a" 1}}}`,
		`{"payload":{"value":}}`,
	} {
		if _, _, valid := validObject([]byte(h)); valid || validJSON([]byte(h)) {
			t.Errorf("%.80q: accepted", h)
		}
	}
}

func TestValidObjectSplitsAsSplitObject(t *testing.T) {
	for _, c := range append(splitCases, validJSONCases...) {
		checkValidObject(t, []byte(c))
	}
}

func BenchmarkValidJSON(b *testing.B) {
	hdr := []byte(`{"protocol_version":2,"id":3,"method":"resume","snapshot_id":"` + strings.Repeat("ab", 32) + `","policy_id":"` + strings.Repeat("cd", 32) +
		`","auth":{"snapshot_key_base64":"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=","snapshot_key_digest":"` + strings.Repeat("ef", 32) +
		`","snapshot_token":"` + strings.Repeat("01", 32) + `"},"payload":{"type":"value","value":{"Number":{"Finite":1.0}}}}`)
	for _, c := range []struct {
		name string
		f    func([]byte) bool
	}{{"ours", validJSON}, {"encoding-json", json.Valid}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(hdr)))
			for b.Loop() {
				if !c.f(hdr) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// jsonscan.SkipString (which trusts validated input) ends a string where
// scanString (which validates) does.
func TestSkipStringAgreesWithScanString(t *testing.T) {
	for _, c := range []string{`""`, `"a"`, `"\\"`, `"\\\\"`, `"\""`, `"a\\\"b"`, `"\\\\\"x"`, `"\u0022"`, `"` + strings.Repeat(`\\`, 51) + `"`} {
		b := []byte(c + `,"next"`)
		if want := scanString(b, 0); want < 0 || jsonscan.SkipString(b, 0) != want {
			t.Errorf("%s: skipString %d, scanString %d", c, jsonscan.SkipString(b, 0), want)
		}
	}
}

// FuzzSkipString: on every string validJSON accepts, jsonscan.SkipString
// agrees.
func FuzzSkipString(f *testing.F) {
	f.Add([]byte(`"a\\\"b"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			return
		}
		if end := scanString(b, 0); end >= 0 && jsonscan.SkipString(b, 0) != end {
			t.Fatalf("%q: skipString %d, scanString %d", b, jsonscan.SkipString(b, 0), end)
		}
	})
}

// Known keys come back without an allocation and equal to what the
// decoder gives; an escaped spelling of one still splits to the same key.
func TestKnownKeysSplitAsAnyOther(t *testing.T) {
	for _, k := range []string{"protocol_version", "id", "method", "snapshot_id", "auth", "payload", "type", "value", "source"} {
		raw := []byte(`"` + k + `"`)
		got, ok := knownKey(raw)
		if !ok || got != k {
			t.Fatalf("%s: %q %v", k, got, ok)
		}
		if n := testing.AllocsPerRun(100, func() { knownKey(raw) }); n != 0 {
			t.Fatalf("%s: %v allocations", k, n)
		}
	}
	f, err := splitObject([]byte(`{"\u0069d":7,"other":1}`))
	if err != nil || string(f.at("id")) != "7" || string(f.at("other")) != "1" {
		t.Fatalf("%v %v", f, err)
	}
}

// A staged payload is validated and split in one pass as a header's is,
// with stagedJSON's errors for what is not valid UTF-8 JSON.
func TestStagedPayloadReadsAsStagedJSON(t *testing.T) {
	for _, c := range append(append([]string{}, payloadCases...),
		` {"type":"value","value":"Null"} `, `"not an object"`, `[1]`, `{"type":"value","value":{"String":"x"}`,
		"{\"type\":\"value\",\"value\":{\"String\":\"\xff\"}}", `{"type":"value","value":{"Strin":[1,]}}`) {
		b := []byte(c)
		got, gerr := stagedPayload("payload_stage_id", b)
		want, werr := stagedJSON("payload_stage_id", wire.FieldPayload, b)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("%q: error %v, stagedJSON %v", c, gerr, werr)
		}
		if werr != nil {
			continue
		}
		if len(got) != 1 || got[0].key != wire.FieldPayload || string(got[0].raw) != string(want[0].raw) {
			t.Fatalf("%q: %q, stagedJSON %q", c, show(got), show(want))
		}
		sub, err := splitObject(b)
		if err != nil {
			if got[0].split != nil {
				t.Fatalf("%q: split, but not an object", c)
			}
			continue
		}
		if got[0].split == nil || got[0].split.payload == nil {
			t.Fatalf("%q: an object not split on the way", c)
		}
		checkPayloadFields(t, b, *got[0].split.payload, sub)
	}
}

// A batch's answers read from the validator's split give what reading
// them afresh gives: the same answers, the same first error.
func TestAnswersReadOnTheWayAsAfresh(t *testing.T) {
	pl := `{"type":"value","value":{"String":"a\"b"}}`
	for _, h := range []string{
		`{"answers":[{"call_id":1,"payload":` + pl + `},{"call_id":2,"payload":{"type":"error","error":{"name":"E","message":"m"}}}]}`,
		`{"answers":[{"payload":` + pl + `,"call_id":3,"payload":{"type":"value","value":"Null"}}]}`,
		`{"answers":[{"call_id":1,"payload":{"type":"value","valu\u0065":"Null","value":{"String":"x"}}}]}`,
		`{"answers":[{"call_id":1,"payload":{"type":"value","value":"Null","valu\u0065":{"String":"x"}}}]}`,
		`{"answers":[{"call_id":1,"payload":{"type":"value","value":{"Strin":"x"}}}]}`,
		`{"answers":[{"call_id":1,"payload":` + pl + `},7]}`,
		`{"answers":[{"call_id":0,"payload":` + pl + `}]}`,
		`{"answers":[{"call_id":1,"payload":` + pl + `,"extra":1}]}`,
		`{"answers":[{"call_id":1,"payload":[1]}]}`,
		`{"answers":[{"call_id":1}]}`,
		`{"answers":[{}]}`,
		`{"answers":[]}`,
		`{"answers":{"call_id":1}}`,
	} {
		f, isObject, valid := validObject([]byte(h))
		if !valid || !isObject {
			t.Fatalf("%s: not a valid object", h)
		}
		afresh := make(fields, len(f))
		for i, fl := range f {
			afresh[i] = field{key: fl.key, raw: fl.raw}
		}
		got, gerr := stagedSet{}.answers(f, wire.FieldAnswers)
		want, werr := stagedSet{}.answers(afresh, wire.FieldAnswers)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || len(got) != len(want) {
			t.Fatalf("%s: %d answers, %v; afresh %d, %v", h, len(got), gerr, len(want), werr)
		}
		for i := range want {
			genc, _ := got[i].Payload.Outcome.Encoded()
			wenc, _ := want[i].Payload.Outcome.Encoded()
			if got[i].CallID != want[i].CallID || !bytes.Equal(genc, wenc) || fmt.Sprint(got[i].Payload.Outcome.Error) != fmt.Sprint(want[i].Payload.Outcome.Error) {
				t.Fatalf("%s: answer %d is %+v, afresh %+v", h, i, got[i], want[i])
			}
		}
	}
}

// A header that is not valid UTF-8 is fatal with that message wherever
// the bad byte is, the payload's value and a batch's answers included
// (which the validator reads by transcoding); one that is valid UTF-8 but
// not JSON says so.
func TestEnvelopeTellsUTF8FromJSON(t *testing.T) {
	pl := func(s string) string { return `{"type":"value","value":{"String":"` + s + `"}}` }
	for _, c := range []struct{ header, want string }{
		{"{\"id\":1,\"method\":\"compile\",\"source\":\"\xff\"}", "not valid UTF-8"},
		{`{"id":1,"method":"resume","payload":` + pl("ok\xc3") + `}`, "not valid UTF-8"},
		{"{\"id\":1,\"method\":\"resume\",\"payload\":{\"type\":\"value\",\"value\":{\"Strin\":\"\xed\xa0\x80\"}}}", "not valid UTF-8"},
		{`{"id":1,"method":"resume","answers":[{"call_id":1,"payload":` + pl("\xf4\x90\x80\x80") + `}]}`, "not valid UTF-8"},
		{`{"id":1,"method":"resume","payload":` + pl("\xff") + `,}`, "not valid UTF-8"},
		{`{"id":1,"method":"resume","payload":` + pl("ok") + `,}`, "not valid JSON"},
		{`{"id":1,"method":"resume","payload":` + pl("a\\x") + `}`, "not valid JSON"},
		{`{"id":1,"method":"resume","answers":[{"call_id":1,"payload":` + pl("ok") + ` ]}`, "not valid JSON"},
	} {
		_, _, _, err := envelope([]byte(c.header), true)
		if err == nil || err.Error() != "invalid request header: "+c.want {
			t.Errorf("%q: %v, want %q", c.header, err, c.want)
		}
	}
}
