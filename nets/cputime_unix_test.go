//go:build unix

package nets

import "syscall"

// processCPUTime is the user plus system CPU time, in nanoseconds, that
// every thread of this process has used so far.
func processCPUTime() int64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return -1
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
