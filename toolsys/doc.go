// Package toolsys is agcore's tool system: the type-erased Tool the registry
// holds, the Typed[P] front where one parameter struct is both the JSON
// schema the model sees and the parser of the model's arguments, schema and
// argument normalisation and validation, the Registry, the permission
// pipeline (hooks, deny rules, mode, allow rules, approver), secret
// placeholders, the Workspace sandbox and the output cap.
//
// toolsys is plain Go: it knows nothing of actors.
package toolsys
