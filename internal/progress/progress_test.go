package progress

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestInALogFile: outside a terminal, progress is whole lines, one at each
// tenth of the way and one at the end, in order, each with its rate and
// time to go.
func TestInALogFile(t *testing.T) {
	rateAndETA := regexp.MustCompile(` \([0-9.e+]+/s, [0-9hms.]+ to go\)$`)
	for _, tc := range []struct {
		n, batch int
		want     []string
	}{
		{1000, 100, []string{"100", "200", "300", "400", "500", "600", "700", "800", "900", "1000"}},
		{1000, 300, []string{"300", "600", "900", "1000"}},
		{64, 32, []string{"32", "64"}},
		{10, 1, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}},
		{1000, 7, nil}, // checked below: ten lines
	} {
		var buf strings.Builder
		c := NewFor(&buf, false, "reconstructed", tc.n)
		for done := 0; done < tc.n; done += tc.batch {
			c.Add(min(tc.batch, tc.n-done))
		}
		if strings.Contains(buf.String(), "\r") {
			t.Errorf("n %d: a carriage return in a log file: %q", tc.n, buf.String())
		}
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		for i, l := range lines {
			if !rateAndETA.MatchString(l) {
				t.Errorf("line %q has no rate and time to go", l)
			}
			lines[i] = rateAndETA.ReplaceAllString(l, "")
		}
		if tc.want == nil {
			if len(lines) != 10 || lines[9] != fmt.Sprintf("reconstructed %d/%d", tc.n, tc.n) {
				t.Errorf("n %d in batches of %d: %d lines ending %q, want 10 ending at %d", tc.n, tc.batch, len(lines), lines[len(lines)-1], tc.n)
			}
			continue
		}
		var want []string
		for _, w := range tc.want {
			want = append(want, fmt.Sprintf("reconstructed %s/%d", w, tc.n))
		}
		if !slices.Equal(lines, want) {
			t.Errorf("n %d in batches of %d: lines %q, want %q", tc.n, tc.batch, lines, want)
		}
	}
}

// TestOnATerminal: on a terminal every report redraws one line, and the
// last ends it.
func TestOnATerminal(t *testing.T) {
	var buf strings.Builder
	c := NewFor(&buf, true, "scored", 3)
	for range 3 {
		c.Add(1)
	}
	out := buf.String()
	if strings.Count(out, "\r") != 3 || strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") || !strings.Contains(out, "scored 3/3") {
		t.Errorf("output %q: want three redrawn reports, the last ending the line", out)
	}
}
