package engine

// testRuntime serves the package's tests; the Runtime's own tests make and
// close their own.
var testRuntime = NewRuntime()
