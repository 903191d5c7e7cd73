package protocol

import (
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
	"github.com/mustard-sidecar/mustard-sidecar/internal/wire"
)

// compile serves {"method":"compile","source","language"}.
func (s *Session) compile(f fields, payload []byte) (programResult, error) {
	if s.opts.Transport == Binary && len(payload) > 0 {
		return programResult{}, errorf(codeUnexpectedPayload, "compile requests must not include a binary payload")
	}
	lang, err := f.language()
	if err != nil {
		return programResult{}, err
	}
	set := s.takeNamed(nil, f, sourceStageField)
	src, ok, err := f.string("source")
	if err != nil {
		return programResult{}, err
	}
	b, staged, err := set.staged(f, sourceStageField, "source", "compile")
	if err != nil {
		return programResult{}, err
	}
	if staged {
		if !utf8.Valid(b) {
			return programResult{}, errorf(codeInvalidStaged, "%s: the staged bytes are not valid UTF-8", sourceStageField)
		}
		src, ok = string(b), true
	}
	if !ok {
		return programResult{}, errorf(codeMissingField, "compile requires source")
	}
	// Compiling is deterministic: a source compiled before in this process
	// gives the same program, served from the cache (hosts recompile the
	// same program for every run).
	// A compile usually comes before the first start: have a realm ready
	// by then.
	s.Warm()
	key := compileKey(lang, src)
	if id, ok := s.compiled.Get(key); ok {
		if p, ok := s.programs.Get(id); ok {
			return programResult{p}, nil
		}
	}
	s.stats.Compiles++
	o, release := s.compileBound()
	p, err := engine.CompileLanguage(src, lang, o)
	release()
	if err != nil {
		return programResult{}, err
	}
	p = s.cacheProgram(p)
	if cur, ok := s.programs.Peek(p.ID); ok && cur == p {
		// Only beside its program: the entry keeps the source, which
		// the program's weight counts.
		s.compiled.Add(programKey(p), p.ID, int64(len(p.Source)))
	}
	return programResult{p}, nil
}

// language reads compile's language: "javascript" (also when absent or
// null) or "typescript".
func (f fields) language() (engine.Language, error) {
	if !f.present(wire.FieldLanguage) {
		return engine.JavaScript, nil
	}
	v, _, err := f.string(wire.FieldLanguage)
	if err != nil {
		return "", err
	}
	lang, ok := engine.ParseLanguage(v)
	if !ok {
		return "", errorf(codeUnknownLanguage, "unknown language `%s`", v)
	}
	return lang, nil
}

// compileKey is the compile cache's key of a source in a language: the
// source itself for JavaScript, as before languages, and the source after
// a prefix no JavaScript program can start with (a NUL byte cannot begin
// one that compiles) for any other.
func compileKey(lang engine.Language, src string) string {
	if lang == engine.JavaScript {
		return src
	}
	return "\x00" + string(lang) + "\x00" + src
}

// programKey is compileKey of the program's own source.
func programKey(p *engine.Program) string { return compileKey(p.Language, p.Source) }

// programResult is a compile's program ({"kind":"program"}).
type programResult struct{ p *engine.Program }

func (r programResult) encode(id uint64, jsonl bool) Response {
	b := okHeader(id, jsonl, len(r.p.Bytes))
	b = append(b, `,"result":{"kind":"program","program_id":"`...)
	b = append(b, r.p.ID...)
	b = append(b, '"')
	b, payload := appendRaw(b, jsonl, "program_base64", r.p.Bytes)
	return Response{Header: append(b, "}}"...), Payload: payload}
}
