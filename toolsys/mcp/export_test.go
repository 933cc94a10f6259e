package mcp

// CallbackResult exposes callbackResult to the fuzz target.
var CallbackResult = callbackResult

// ErrForeignCallback exposes errForeignCallback to the fuzz target.
var ErrForeignCallback = errForeignCallback

// MarkEvent exposes markEvent to the fuzz target.
var MarkEvent = markEvent
