//go:build !unix

package wasm

import experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

// platformFlags adds nothing where the Unix open flags do not exist.
func platformFlags(experimentalsys.Oflag) int { return 0 }
