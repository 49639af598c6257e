//go:build unix

package pgtest

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive lock on path, waiting for it, and returns the
// function that releases it. It opens the file read-only, creating it
// only when it is missing: flock needs no write access, so another user's
// lock file (0644 under a umask of 022; /tmp's protected_regular refuses
// O_CREAT on it) serves as well.
func lockFile(path string) (func(), error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o666)
	}
	if err != nil {
		return nil, err
	}
	// A wait this long is an image build, or a process that holds the
	// lock stopped (a debugger, ^Z): say which file, rather than hang
	// silently until go test's timeout.
	note := time.AfterFunc(lockWaitNote, func() {
		say("pgtest: waiting for %s for %v: another test process holds it (building an image or starting a server; a stopped process holds it until it ends)\n", path, lockWaitNote)
	})
	defer note.Stop()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// lockWaitNote is how long lockFile waits before it says what it waits for.
const lockWaitNote = 30 * time.Second

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
