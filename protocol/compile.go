package protocol

import (
	"unicode/utf8"

	"github.com/mustard-sidecar/mustard-sidecar/engine"
)

// compile serves {"method":"compile","source"}.
func (s *Session) compile(f fields, payload []byte) (programResult, error) {
	if s.opts.Transport == Binary && len(payload) > 0 {
		return programResult{}, errorf(codeUnexpectedPayload, "compile requests must not include a binary payload")
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
	if id, ok := s.compiled.Get(src); ok {
		if p, ok := s.programs.Get(id); ok {
			return programResult{p}, nil
		}
	}
	s.stats.Compiles++
	o, release := s.compileBound()
	p, err := engine.CompileWith(src, o)
	release()
	if err != nil {
		return programResult{}, err
	}
	p = s.cacheProgram(p)
	if cur, ok := s.programs.Peek(p.ID); ok && cur == p {
		// Only beside its program: the entry keeps the source, which
		// the program's weight counts.
		s.compiled.Add(p.Source, p.ID, int64(len(p.Source)))
	}
	return programResult{p}, nil
}

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
