package wasm

// SetBeforeRun makes rt call f as each run of a module starts. Set it
// before any run.
func SetBeforeRun(rt *Runtime, f func()) { rt.beforeRun = f }
