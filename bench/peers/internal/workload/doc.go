// Package workload is the task every peer runs in the comparison: one turn
// is a user question, a call of the "lookup" tool with {"key":"alpha"}, the
// tool's result sent back, and the model's answer quoting that result. Two
// chat requests and one tool call per turn, against the same mock server.
//
// The mock plays Script, which is stateless (a reply depends on the request
// alone, so concurrent conversations never disturb each other) and checks
// the tool result: a turn that sends anything but Lookup(Key) gets an error
// reply, and CheckAnswer fails a turn whose answer does not quote the
// result, so a peer that cuts a corner fails the run instead of looking
// fast.
package workload
