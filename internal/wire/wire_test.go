package wire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

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

// Every Method, Field and Code constant is in its list once, and every
// name has the wire's shape.
func TestListsHoldEveryConstant(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "wire.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]map[string]bool{"Method": {}, "Field": {}, "Code": {}}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for i, n := range spec.(*ast.ValueSpec).Names {
				for prefix, set := range declared {
					if strings.HasPrefix(n.Name, prefix) {
						lit := spec.(*ast.ValueSpec).Values[i].(*ast.BasicLit)
						s, _ := strconv.Unquote(lit.Value)
						set[s] = true
					}
				}
			}
		}
	}
	shape := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	for prefix, list := range map[string][]string{"Method": Methods(), "Field": Fields(), "Code": Codes()} {
		seen := map[string]bool{}
		for _, n := range list {
			if seen[n] {
				t.Errorf("%s list: %q twice", prefix, n)
			}
			seen[n] = true
			if !shape.MatchString(n) {
				t.Errorf("%s list: %q is not snake_case", prefix, n)
			}
			if !declared[prefix][n] {
				t.Errorf("%s list: %q is not a %s constant", prefix, n, prefix)
			}
		}
		for n := range declared[prefix] {
			if !seen[n] {
				t.Errorf("%s constant %q is missing from its list", prefix, n)
			}
		}
	}
}
