// Command sample-table draws more synthetic rows from a train-table model,
// as many as asked, optionally given conditions: -condition class=p fixes
// a category, -condition age=30..40 keeps a number in a range (either end
// may be left out), and the rows come from the model's law given them, as
// SDV's conditional sampling does. The chains start at training rows that
// meet the conditions and stay in the training rows' range; the rows are
// written in the table's columns, categories as their words, numbers on
// the data's scale.
//
//	go run ./cmd/sample-table -run runs/table-mushroom -rows 500 -condition class=p
//	go run ./cmd/sample-table -run runs/table-adult -rows 2000 -condition income=>50K -condition age=..30
//	go run ./cmd/sample-table -run runs/table-adult -rows 10000 -sweeps 20 -out more.csv
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/densityrun"
	"github.com/edlebm/edlebm/internal/flagcheck"
)

func main() {
	o, flags, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		log.Fatalf("sample-table: %v", err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	o.Stop = stop
	r, err := densityrun.SampleTable(o)
	if err != nil {
		log.Fatalf("sample-table: %v", flags.Explain(err))
	}
	fmt.Printf("%d rows drawn in %.1f s from %d starting rows", r.Rows, r.Seconds, r.Starts)
	if r.Acceptance != nil {
		fmt.Printf(" (MALA step %.3g, acceptance %.3f)", r.StepSize, *r.Acceptance)
	}
	fmt.Printf(": %s\n", r.Out)
}

// conditionFlags collects repeated -condition COLUMN=VALUE flags.
type conditionFlags map[string]string

func (c conditionFlags) String() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, name+"="+c[name])
	}
	return strings.Join(parts, ",")
}

func (c conditionFlags) Set(text string) error {
	name, category, ok := strings.Cut(text, "=")
	if name, category = strings.TrimSpace(name), strings.TrimSpace(category); !ok || name == "" || category == "" {
		return fmt.Errorf("%q: want COLUMN=CATEGORY or COLUMN=LO..HI, such as class=p or age=30..40", text)
	}
	if _, twice := c[name]; twice {
		return fmt.Errorf("%q: column %q already has a condition", text, name)
	}
	c[name] = category
	return nil
}

// parseFlags turns the command line into densityrun.TableSampleOptions,
// and the flags that set each option, for the run layer's errors.
func parseFlags(args []string) (densityrun.TableSampleOptions, flagcheck.Flags, error) {
	var o densityrun.TableSampleOptions
	conditions := conditionFlags{}
	fs := flag.NewFlagSet("sample-table", flag.ContinueOnError)
	fs.StringVar(&o.Run, "run", "", "the train-table run folder (required)")
	fs.StringVar(&o.Method, "method", density.MixedMethods[0], "the run's model that draws: "+strings.Join(density.MixedMethods, " or "))
	fs.StringVar(&o.Data, "data", "", "the table's CSV file, when it moved since training (default: the run's record)")
	fs.Var(conditions, "condition", "COLUMN=CATEGORY (a category fixed) or COLUMN=LO..HI (a number kept in a range, either end optional) in every row; repeatable")
	fs.IntVar(&o.Rows, "rows", 1000, "rows to draw")
	fs.IntVar(&o.Sweeps, "sweeps", 200, "sweeps of the chains (train-table's -sweeps)")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the chains")
	fs.StringVar(&o.Out, "out", "", "the CSV file written (default RUN/METHOD/samples-COLUMN=CATEGORY,….csv, or samples-more.csv without -condition)")
	fs.StringVar(&o.Backend, "backend", "auto", backend.FlagUsage)
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	flags := flagcheck.FlagsOf(&o, fs)
	flags["Conditions"] = "condition"
	if fs.NArg() > 0 {
		return o, flags, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := flagcheck.Check( // 0 would take the library's default
		flagcheck.Rule{Name: "rows", Value: o.Rows, OK: o.Rows >= 1, Want: "≥ 1"},
		flagcheck.Rule{Name: "sweeps", Value: o.Sweeps, OK: o.Sweeps >= 1, Want: "≥ 1"},
	); err != nil {
		return o, flags, err
	}
	if len(conditions) > 0 {
		o.Conditions = conditions
	}
	return o, flags, nil
}
