package jsinspect

// What differs from Node 20, and why.
//
// Guest code never runs except where util.format converts a value: %s on
// a function, or on an object with its own toString or Symbol.toPrimitive
// (String(v)), %d (Number(v)), %i (parseInt), %f (parseFloat), %j
// (JSON.stringify, with toJSON). Node also reads a few properties with
// ordinary gets, which run getters and proxy traps; here they are read as
// data along the prototype chain, and an accessor reads as absent:
//
//   - Symbol.toStringTag: a getter (class T { get [Symbol.toStringTag]() })
//     gives no tag (Node shows "T [value] {}", this package "T {}"). A
//     typed array's tag, a built-in getter, is its constructor's name, as
//     in Node.
//   - constructor.name, a function's name, an error's name, message,
//     stack, cause and errors: a getter counts as absent (Node calls it,
//     and dies with what it throws when it throws).
//   - instanceof (used to find the constructor's name) is
//     OrdinaryHasInstance; a custom Symbol.hasInstance is not called.
//   - util.inspect.custom functions are never called.
//   - A proxy is shown as its target, found through every level of a
//     proxy of a proxy (Node reads the inner proxy with its traps).
//
// The engine's values differ from V8's in places, and the output with
// them: a goja error's stack is goja's ("\tat f (file:1:2(3))" frames,
// which are rewritten to V8's "    at " indent so that Node's rules treat
// them alike), sloppy functions have no own arguments and caller
// properties (%o lists neither), parseInt rounds long digit strings
// differently, Function.prototype.toString (%s on a function) returns
// goja's text, and internalConstructorName (V8's GetConstructorName, seen
// in "[Foo: null prototype]" and "Object <Complex prototype>") knows the
// internal kind of an object but not which constructor made it.
//
// Column widths for array grouping count East Asian wide characters as
// two columns and combining marks as none, as Node does without ICU; with
// ICU (the usual build) Node asks ICU, which differs for a few rare
// characters (emoji sequences, ambiguous widths).
//
// Bounds: Node stops expanding once 2^27 characters are produced at one
// level; here Options.MaxBytes and Options.MaxWork stop the formatting
// (Result.Truncated), and Format polls for an interrupt every 1,024
// values visited.
//
// Format must be called on the goroutine that runs rt, as any use of a
// goja runtime.
