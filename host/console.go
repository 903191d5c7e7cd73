package host

import "context"

// LogLine is one line a guest wrote with console (the console
// extension). Level is the method that wrote it: "log", "info", "warn",
// "error" or "debug". Text is the line as Node's console.log formats its
// arguments (util.format). When a step's lines exceed Limits.MaxLogBytes
// the sidecar drops the rest and adds a last "warn" line saying how many
// it dropped.
type LogLine struct {
	Level string `json:"level"`
	Text  string `json:"text"`
}

// Console selects what a guest's console does (the console extension).
type Console string

const (
	// ConsoleOff, the default (as is ""), gives the guest a console only
	// when it is granted capabilities named console.log, console.info,
	// console.warn, console.error or console.debug: each is then a host
	// call like any capability: the guest's call returns undefined
	// whatever value the host answers, and throws an error answer.
	ConsoleOff Console = "off"
	// ConsoleCollect gives the guest all five methods: those not granted
	// as capabilities format their arguments and append a LogLine to the
	// step's Logs.
	ConsoleCollect Console = "collect"
)

// wire is the console field to send: nothing for ConsoleOff, so that a
// sidecar without the extension sees the plain protocol.
func (c Console) wire() string {
	if c == ConsoleOff {
		return ""
	}
	return string(c)
}

// Entry selects how a program runs (the entry_call extension).
type Entry string

const (
	// EntryScript, the default (as is ""), runs the program as a script:
	// the result is its completion value, awaited if it is a promise.
	EntryScript Entry = "script"
	// EntryCall runs a program whose completion value is a function
	// (`async function main(input) {...}` or an arrow function), calls it
	// with one argument, the inputs object, and makes its return value,
	// awaited if it is a promise, the result. A program that evaluates to
	// anything else fails with "Runtime: TypeError: program did not
	// evaluate to a function (got <typeof>)".
	EntryCall Entry = "call"
)

func (e Entry) wire() string {
	if e == EntryScript {
		return ""
	}
	return string(e)
}

// Language is the language of a program's source (the typescript
// extension).
type Language string

const (
	// JavaScript, the default (as is ""): the source is a classic script.
	JavaScript Language = "javascript"
	// TypeScript: type syntax is erased before the program is compiled,
	// and errors give lines and columns in the TypeScript source. Enums,
	// namespaces and parameter properties run as TypeScript compiles
	// them; decorators and import/export fail with a "Parse" error.
	TypeScript Language = "typescript"
)

func (l Language) wire() string {
	if l == JavaScript {
		return ""
	}
	return string(l)
}

// CompileOptions are the options of a compile.
type CompileOptions struct {
	// Language is the source's language: empty or JavaScript, or
	// TypeScript (the typescript extension). The program id covers it.
	Language Language
}

// CompileWith is Compile with options: CompileWith(ctx, src,
// CompileOptions{Language: TypeScript}) compiles a TypeScript program,
// for a host that picks the language at run time (from a file name, say).
// A sidecar without the typescript extension refuses a TypeScript
// compile with an *Error.
func (c *Client) CompileWith(ctx context.Context, source string, opts CompileOptions) (Program, error) {
	return c.compile(ctx, source, opts.Language.wire())
}
