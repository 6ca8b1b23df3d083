// Command score-images asks of a trained latent EBM which of a folder of
// new images are unlike the ones it was trained on: it scores every image
// with the run's anomaly score (the score of the paper's held-out-class
// protocol, an estimate of −log p(x, z) at posterior samples z), and writes
// the images ranked from the least typical (scores.csv), pictures of the
// least and the most typical, and, when a labels file or class folders say
// which images are anomalies, the AUPRC with its 95 % bootstrap interval.
//
//	go run ./cmd/score-images -run runs/photos-ed -images new-photos
//	go run ./cmd/score-images -run runs/photos-ed -images new-photos -anomalous-classes odd
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/lebmrun"
)

func main() {
	var o lebmrun.ScoreOptions
	var classes string
	flag.StringVar(&o.Run, "run", "", "the train-lebm run folder whose checkpoint scores (required)")
	flag.StringVar(&o.Images, "images", "", "the folder of PNG and JPEG images to score, directly or in class folders (required)")
	flag.StringVar(&o.Labels, "labels", "", `CSV file saying which images are anomalies: a header, then rows "file,anomaly" (file relative to -images; 1/0, true/false or anomaly/normal)`)
	flag.StringVar(&classes, "anomalous-classes", "", "instead of -labels: the class folders of -images whose images are anomalies, comma-separated")
	flag.StringVar(&o.Out, "out", "", "output folder (default RUN/eval/scores-BASE, BASE the base name of -images)")
	flag.StringVar(&o.Backend, "backend", "auto", backend.FlagUsage)
	flag.IntVar(&o.Batch, "batch", 64, "images scored at a time")
	flag.Int64Var(&o.Seed, "seed", 1, "seed of the posterior chains")
	flag.BoolVar(&o.Enlarge, "enlarge", false, "accept images smaller than the run's, enlarging them (a run trained with -enlarge always does)")
	flag.IntVar(&o.Show, "show", 16, "images in each picture of the least and the most typical")
	flag.Parse()
	if flag.NArg() > 0 {
		log.Fatalf("score-images: unexpected arguments %q", flag.Args())
	}
	o.AnomalousClasses = flagcheck.List(classes)
	report, ranked, err := lebmrun.Score(o)
	if err != nil {
		flags := flagcheck.FlagsOf(&o, flag.CommandLine)
		flags["AnomalousClasses"] = "anomalous-classes" // parsed from one string
		log.Fatalf("score-images: %v", flags.Explain(err))
	}
	fmt.Printf("the least typical of %d images:\n", report.N)
	for _, r := range ranked[:min(5, len(ranked))] {
		fmt.Printf("  %10.2f  %s\n", r.Score, r.File)
	}
	if report.AUPRCInterval != nil {
		fmt.Printf("AUPRC %.4f (95 %% interval %.4f–%.4f), %d anomalies of %d images\n",
			report.AUPRC, report.AUPRCInterval.Lo, report.AUPRCInterval.Hi, report.Anomalies, report.N)
	}
	fmt.Printf("ranked scores, pictures and report in %s\n", report.Out)
	os.Exit(0)
}
