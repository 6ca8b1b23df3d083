// Package progress reports how far a long loop has come: the count, the
// rate and the time to go, redrawn in place on a terminal and written as
// whole lines, one at each tenth of the way, in a log file (where a
// carriage return would run every report into one line).
package progress

import (
	"fmt"
	"io"
	"os"
	"time"
)

// A Counter reports the progress of a loop over n items.
type Counter struct {
	what    string
	n, done int
	out     io.Writer
	inPlace bool
	start   time.Time
}

// New returns a Counter of n items, reported on standard output as "what
// done/n (rate, time to go)", in place when it is a terminal.
func New(what string, n int) *Counter {
	info, err := os.Stdout.Stat()
	return NewFor(os.Stdout, err == nil && info.Mode()&os.ModeCharDevice != 0, what, n)
}

// NewFor returns a Counter reporting to out, redrawing in place when
// inPlace.
func NewFor(out io.Writer, inPlace bool, what string, n int) *Counter {
	return &Counter{what: what, n: n, out: out, inPlace: inPlace, start: time.Now()}
}

// Add records k more items done and reports when it should.
func (c *Counter) Add(k int) {
	prev := c.done
	c.done = min(c.done+k, c.n)
	if !c.inPlace && c.done < c.n && tenth(c.done, c.n) == tenth(prev, c.n) {
		return
	}
	line := fmt.Sprintf("%s %d/%d", c.what, c.done, c.n)
	if elapsed := time.Since(c.start).Seconds(); elapsed > 0 && c.done > 0 {
		rate := float64(c.done) / elapsed
		line += fmt.Sprintf(" (%.3g/s, %s to go)", rate, time.Duration(float64(c.n-c.done)/rate*float64(time.Second)).Round(time.Second))
	}
	switch {
	case c.inPlace && c.done == c.n:
		fmt.Fprintf(c.out, "\r%s\033[K\n", line)
	case c.inPlace:
		fmt.Fprintf(c.out, "\r%s\033[K", line)
	default:
		fmt.Fprintln(c.out, line)
	}
}

// tenth is how many tenths of n done reaches.
func tenth(done, n int) int { return 10 * done / max(n, 1) }
