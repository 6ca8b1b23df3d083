//go:build !unix

package nets

// processCPUTime is −1 where the process's CPU time is not read.
func processCPUTime() int64 { return -1 }
