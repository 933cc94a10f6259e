//go:build !unix

package memory

// ownsDirLock reports whether Open locks the data directory itself. Without
// flock, Badger's own guard locks it, and Open leaves the empty files of an
// interrupted start to Badger, which refuses them: remove them by hand.
const ownsDirLock = false

// dirLock is not used where Badger locks the directory itself.
type dirLock struct{}

// lockDir returns no lock: Badger's guard takes it.
func lockDir(string, bool) (*dirLock, error) { return nil, nil }

func (l *dirLock) release() error { return nil }
