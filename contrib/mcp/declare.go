package mustardmcp

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Tool is what a declaration needs of an MCP tool: its name, description
// and JSON Schemas (as decoded from JSON: map[string]any, []any, string,
// float64, bool, nil; or anything that marshals to JSON).
type Tool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  any
	OutputSchema any
}

// Usage is the paragraph Declarations puts before the namespaces.
const Usage = `// Write a TypeScript (or JavaScript) program that uses the API declared below.
// Every function returns a Promise: call it with await, and start calls that do
// not depend on each other together (await Promise.all([...])) so they run in
// parallel. A failed call throws an Error whose message is the tool's text;
// catch it where you can do something about it. console.log what you want to
// see; the program's last expression (or the value your function returns) is
// the answer, so end with it. There is no fetch, require, import or file
// system: only the functions below.`

// Declare returns the TypeScript declaration of one namespace: a
// `declare const <namespace>: { ... };` with one method per tool, taking
// the tool's input object and returning a Promise of its output. Tools
// whose names a guest cannot call (see CallableName) are left out.
func Declare(namespace string, tools []Tool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "declare const %s: {\n", namespace)
	sorted := slices.Clone(tools)
	slices.SortStableFunc(sorted, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	first := true
	for _, t := range sorted {
		if !CallableName(namespace, t.Name) {
			continue
		}
		if !first {
			b.WriteString("\n")
		}
		first = false
		in := newSchemaGen(t.InputSchema)
		argType := in.typeOf(in.root, "  ", 0)
		optional := "?"
		if schemaRequires(in, in.root) {
			optional = ""
		}
		doc := t.Description
		if t.Title != "" && !strings.Contains(doc, t.Title) {
			doc = strings.TrimSpace(t.Title + "\n\n" + doc)
		}
		writeDoc(&b, "  ", doc)
		outType := "unknown"
		if t.OutputSchema != nil {
			out := newSchemaGen(t.OutputSchema)
			outType = out.typeOf(out.root, "  ", 0)
		}
		fmt.Fprintf(&b, "  %s(args%s: %s): Promise<%s>;\n", propName(t.Name), optional, argType, outType)
	}
	b.WriteString("};\n")
	return b.String()
}

// schemaRequires reports whether an input schema makes the argument
// object required: it names required properties (or is not an object).
func schemaRequires(g *schemaGen, s any) bool {
	m, ok := g.resolve(s, 0)
	if !ok {
		return true
	}
	if r, ok := m["required"].([]any); ok && len(r) > 0 {
		return true
	}
	return false
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// segmentRE is a capability path segment the sidecar accepts.
var segmentRE = regexp.MustCompile(`^[A-Za-z0-9_$-]+$`)

// IsNamespace reports whether name can be a namespace: a JavaScript
// identifier that is not a reserved word.
func IsNamespace(name string) bool {
	return identRE.MatchString(name) && !reserved[name] && !strings.HasPrefix(name, "__mustard")
}

// CallableName reports whether a guest can call the tool as
// namespace.tool: the tool's name is made of letters, digits, _, $ and -
// (a name with - is called with brackets, ns["get-file"]), and the
// capability name is at most 128 bytes.
func CallableName(namespace, tool string) bool {
	return segmentRE.MatchString(tool) && len(namespace)+1+len(tool) <= 128
}

var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`break case catch class const continue debugger default delete do else
		enum export extends false finally for function if import in instanceof new null return super switch
		this throw true try typeof var void while with yield let static implements interface package private
		protected public await arguments eval undefined NaN Infinity globalThis console Math JSON Object Array
		String Number Boolean Promise Symbol Error Date RegExp Map Set`) {
		reserved[w] = true
	}
}

func propName(name string) string {
	if identRE.MatchString(name) {
		return name
	}
	q, _ := json.Marshal(name)
	return string(q)
}

func writeDoc(b *strings.Builder, indent, text string) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	if text == "" {
		return
	}
	text = strings.ReplaceAll(text, "*/", "*\\/")
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "%s/** %s */\n", indent, lines[0])
		return
	}
	fmt.Fprintf(b, "%s/**\n", indent)
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			fmt.Fprintf(b, "%s *\n", indent)
		} else {
			fmt.Fprintf(b, "%s * %s\n", indent, l)
		}
	}
	fmt.Fprintf(b, "%s */\n", indent)
}

// schemaGen turns one JSON Schema (and the definitions it holds) into a
// TypeScript type. Whatever it cannot express exactly becomes unknown,
// or a wider type, never a narrower one.
type schemaGen struct {
	root  any
	stack []string // $refs being expanded, against recursion
}

func newSchemaGen(schema any) *schemaGen {
	var root any
	switch s := schema.(type) {
	case nil:
		root = nil
	case map[string]any, bool:
		root = s
	default:
		b, err := json.Marshal(s)
		if err == nil {
			_ = json.Unmarshal(b, &root)
		}
	}
	return &schemaGen{root: root}
}

const maxDepth = 24

// resolve follows $ref chains to a schema object; false for true, false,
// nil, a ref that cannot be followed or one already being expanded.
func (g *schemaGen) resolve(s any, depth int) (map[string]any, bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return nil, false
	}
	for i := 0; i < 16; i++ {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, true
		}
		t, ok := g.lookup(ref)
		if !ok {
			return nil, false
		}
		m = t
	}
	return nil, false
}

// lookup finds a local reference: "#", "#/$defs/X", "#/definitions/X",
// or any JSON pointer into the root.
func (g *schemaGen) lookup(ref string) (map[string]any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	var cur any = g.root
	ptr := strings.TrimPrefix(ref, "#")
	if ptr != "" {
		if !strings.HasPrefix(ptr, "/") {
			return nil, false
		}
		for _, part := range strings.Split(ptr[1:], "/") {
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			switch c := cur.(type) {
			case map[string]any:
				cur = c[part]
			case []any:
				i, err := strconv.Atoi(part)
				if err != nil || i < 0 || i >= len(c) {
					return nil, false
				}
				cur = c[i]
			default:
				return nil, false
			}
		}
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

func (g *schemaGen) typeOf(s any, indent string, depth int) string {
	if depth > maxDepth {
		return "unknown"
	}
	switch v := s.(type) {
	case bool:
		if v {
			return "unknown"
		}
		return "never"
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			if slices.Contains(g.stack, ref) {
				return "unknown" // recursive: TypeScript would need a named type
			}
			t, ok := g.lookup(ref)
			if !ok {
				return "unknown"
			}
			g.stack = append(g.stack, ref)
			r := g.typeOf(t, indent, depth+1)
			g.stack = g.stack[:len(g.stack)-1]
			if len(v) == 1 {
				return r
			}
			// Keywords next to $ref (2019-09 and later) narrow it further:
			// the ref's type is still a correct, wider type.
			return r
		}
		t := g.objectSchema(v, indent, depth)
		if n, _ := v["nullable"].(bool); n && t != "unknown" {
			t = union([]string{t, "null"})
		}
		return t
	}
	return "unknown"
}

// objectSchema is the type of a schema object without $ref.
func (g *schemaGen) objectSchema(v map[string]any, indent string, depth int) string {
	if c, ok := v["const"]; ok {
		if lit, ok := literal(c); ok {
			return lit
		}
		return "unknown"
	}
	if e, ok := v["enum"].([]any); ok {
		var lits []string
		for _, x := range e {
			lit, ok := literal(x)
			if !ok {
				return "unknown"
			}
			lits = append(lits, lit)
		}
		if len(lits) == 0 {
			return "never"
		}
		return union(lits)
	}
	var parts []string
	base := g.typed(v, indent, depth)
	if base != "unknown" {
		parts = append(parts, base)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		alts, ok := v[k].([]any)
		if !ok {
			continue
		}
		var ts []string
		for _, a := range alts {
			t := g.typeOf(a, indent, depth+1)
			if t == "unknown" {
				ts = nil
				break
			}
			ts = append(ts, t)
		}
		if len(ts) > 0 {
			parts = append(parts, union(ts))
		}
	}
	if all, ok := v["allOf"].([]any); ok {
		for _, a := range all {
			if t := g.typeOf(a, indent, depth+1); t != "unknown" {
				parts = append(parts, t)
			}
		}
	}
	switch len(parts) {
	case 0:
		return "unknown"
	case 1:
		return parts[0]
	}
	for i, p := range parts {
		parts[i] = paren(p)
	}
	return strings.Join(parts, " & ")
}

// typed is the type the "type" keyword (or, without one, properties or
// items) gives.
func (g *schemaGen) typed(v map[string]any, indent string, depth int) string {
	var types []string
	switch t := v["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return "unknown"
			}
			types = append(types, s)
		}
	case nil:
		switch {
		case v["properties"] != nil || v["additionalProperties"] != nil || v["patternProperties"] != nil:
			types = []string{"object"}
		case v["items"] != nil || v["prefixItems"] != nil:
			types = []string{"array"}
		default:
			return "unknown"
		}
	default:
		return "unknown"
	}
	var ts []string
	for _, t := range types {
		switch t {
		case "string":
			ts = append(ts, "string")
		case "number", "integer":
			ts = append(ts, "number")
		case "boolean":
			ts = append(ts, "boolean")
		case "null":
			ts = append(ts, "null")
		case "array":
			ts = append(ts, g.array(v, indent, depth))
		case "object":
			ts = append(ts, g.object(v, indent, depth))
		default:
			return "unknown"
		}
	}
	if len(ts) == 0 {
		return "unknown"
	}
	return union(ts)
}

func (g *schemaGen) array(v map[string]any, indent string, depth int) string {
	var prefix []any
	rest := v["items"]
	if p, ok := v["prefixItems"].([]any); ok {
		prefix = p
	} else if p, ok := v["items"].([]any); ok { // draft 4-7 tuples
		prefix = p
		rest = v["additionalItems"]
	}
	restType := "unknown"
	if rest != nil {
		restType = g.typeOf(rest, indent, depth+1)
	}
	if len(prefix) == 0 {
		return arrayOf(restType)
	}
	minItems := 0
	if n, ok := v["minItems"].(float64); ok && n >= 0 && n == math.Trunc(n) {
		minItems = int(n)
	}
	var elems []string
	for i, p := range prefix {
		t := g.typeOf(p, indent, depth+1)
		if i >= minItems {
			t = paren(t) + "?"
		}
		elems = append(elems, t)
	}
	if restType != "never" {
		elems = append(elems, "..."+arrayOf(restType))
	}
	return "[" + strings.Join(elems, ", ") + "]"
}

func arrayOf(t string) string {
	return paren(t) + "[]"
}

func (g *schemaGen) object(v map[string]any, indent string, depth int) string {
	props, _ := v["properties"].(map[string]any)
	required := map[string]bool{}
	if r, ok := v["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				required[s] = true
			}
		}
	}
	var index string // the index signature's type, "" for none
	switch ap := v["additionalProperties"].(type) {
	case nil:
		if len(props) == 0 {
			index = "unknown"
		}
	case bool:
		if ap {
			index = "unknown"
		}
	default:
		index = g.typeOf(ap, indent+"  ", depth+1)
	}
	if v["patternProperties"] != nil && index == "" {
		index = "unknown"
	}
	if len(props) > 0 && index != "" && index != "unknown" {
		// Every property must fit an index signature: keep it exact only
		// for properties that do; otherwise widen it.
		index = "unknown"
	}
	if len(props) == 0 {
		if index == "" {
			return "{}"
		}
		return "{ [key: string]: " + index + " }"
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	names = orderedKeys(v, names)
	var b strings.Builder
	b.WriteString("{\n")
	inner := indent + "  "
	for _, k := range names {
		p := props[k]
		if pm, ok := p.(map[string]any); ok {
			writeDoc(&b, inner, propDoc(pm))
		}
		opt := "?"
		if required[k] {
			opt = ""
		}
		fmt.Fprintf(&b, "%s%s%s: %s;\n", inner, propName(k), opt, g.typeOf(p, inner, depth+1))
	}
	if index != "" {
		fmt.Fprintf(&b, "%s[key: string]: %s;\n", inner, index)
	}
	b.WriteString(indent + "}")
	return b.String()
}

// propDoc is the JSDoc text of a property: its description (or title),
// and its default.
func propDoc(p map[string]any) string {
	d, _ := p["description"].(string)
	if d == "" {
		d, _ = p["title"].(string)
	}
	if def, ok := p["default"]; ok {
		if b, err := json.Marshal(def); err == nil && len(b) <= 200 {
			if d != "" {
				d += "\n"
			}
			d += "@default " + string(b)
		}
	}
	return d
}

// orderedKeys orders properties for reading: the required ones in the
// order "required" lists them (decoded JSON objects have lost theirs),
// then the others by name.
func orderedKeys(v map[string]any, names []string) []string {
	var out []string
	seen := map[string]bool{}
	if r, ok := v["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok && !seen[s] && slices.Contains(names, s) {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if !seen[n] {
			out = append(out, n)
		}
	}
	return out
}

func literal(x any) (string, bool) {
	switch v := x.(type) {
	case nil:
		return "null", true
	case bool, string:
		b, _ := json.Marshal(v)
		return string(b), true
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return "", false
		}
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case json.Number:
		return v.String(), true
	}
	return "", false
}

// union joins alternatives, without repeats, "unknown" absorbing all.
func union(ts []string) string {
	var out []string
	for _, t := range ts {
		if t == "unknown" {
			return "unknown"
		}
		if t == "never" || slices.Contains(out, t) {
			continue
		}
		out = append(out, t)
	}
	switch len(out) {
	case 0:
		return "never"
	case 1:
		return out[0]
	}
	for i, t := range out {
		out[i] = paren(t)
	}
	return strings.Join(out, " | ")
}

// paren wraps a type holding a top-level union, intersection, function
// or optional marker so that it can be an operand.
func paren(t string) string {
	depth := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '{', '(', '[', '<':
			depth++
		case '}', ')', ']', '>':
			depth--
		case '"':
			// skip a string literal
			for i++; i < len(t) && t[i] != '"'; i++ {
				if t[i] == '\\' {
					i++
				}
			}
		case '|', '&', '?':
			if depth == 0 {
				return "(" + t + ")"
			}
		}
	}
	return t
}
