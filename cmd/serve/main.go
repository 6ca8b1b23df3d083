// Command serve answers a trained model's scores over HTTP, gathering
// concurrent requests into batches of the compiled sizes. A train-lebm
// run answers anomaly scores, reconstructions and samples of images; a
// train-vectors run the log-density of rows; a train-table run the energy
// of rows of numbers and categories, its conformal p-value and the target
// column's probabilities:
//
//	go run ./cmd/serve -run runs/photos-ed
//	curl -F image=@new.png http://127.0.0.1:8080/v1/score
//	go run ./cmd/serve -run runs/vectors-wine_data -method ed
//	curl -H 'Content-Type: application/json' -d '{"rows": [[13.2, 1.8, …]]}' http://127.0.0.1:8080/v1/score
//	go run ./cmd/serve -run runs/table-penguins
//	curl -H 'Content-Type: text/csv' --data-binary @new-penguins.csv http://127.0.0.1:8080/v1/score
//
// Routes: GET / (a page to upload images), POST /v1/score (multipart
// image files or one PNG/JPEG body, ?reconstruct=1 adding
// reconstructions; JSON rows for a train-vectors run; JSON or CSV rows
// for a train-table run, ?unseen=anomalous ranking a row with a category
// training never saw first instead of refusing it), GET /v1/samples (a PNG of generated images; a
// train-vectors or train-table run's samples.csv), GET
// /v1/info, GET /metrics (Prometheus), GET /healthz, GET /readyz. It
// listens on 127.0.0.1 unless -listen says otherwise, and then asks for a
// bearer token (-token-file or $EDLEBM_TOKEN). SIGTERM or SIGINT drains
// the requests in flight, then exits. See docs/serving.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/imagefile"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/internal/settings"
	"github.com/edlebm/edlebm/serving"
)

func main() {
	o, flags, err := parseFlags(os.Args[1:])
	if err != nil {
		log.Fatalf("serve: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := serving.Serve(ctx, o); err != nil {
		log.Fatalf("serve: %v", flags.Explain(err))
	}
}

// parseFlags reads the command line into serving's options, and the flags
// that set each option, for its errors.
func parseFlags(args []string) (serving.Options, flagcheck.Flags, error) {
	var o serving.Options
	var sizes, tokenFile string
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&o.Run, "run", "", "the run folder to serve: train-lebm's, train-vectors' or train-table's (required)")
	fs.StringVar(&o.Method, "method", "", "of a train-vectors or train-table run: the method whose model scores rows (default "+serving.DefaultMethod+", med for a table)")
	fs.StringVar(&o.Listen, "listen", serving.DefaultListen, "address to listen on; any but a loopback address needs a token")
	fs.StringVar(&tokenFile, "token-file", "", "file holding the bearer token callers must send (default $EDLEBM_TOKEN; none on loopback)")
	fs.StringVar(&o.Backend, "backend", "auto", backend.FlagUsage)
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the images' posterior chains (score-images' -seed: the same scores)")
	fs.StringVar(&sizes, "batch-sizes", settings.JoinInts(serving.DefaultBatchSizes), "compiled batch sizes, comma-separated; a request holds at most the largest's images or rows")
	fs.DurationVar(&o.MaxWait, "max-wait", serving.DefaultMaxWait, "how long a batch waits for more requests after its first")
	fs.IntVar(&o.Samples, "samples", serving.DefaultSamples, "generated images in /v1/samples")
	fs.BoolVar(&o.Enlarge, "enlarge", false, "accept images smaller than the run's, enlarging them")
	fs.IntVar(&o.MaxPixels, "max-pixels", imagefile.DefaultMaxPixels, "most pixels an image's header may declare")
	fs.Int64Var(&o.MaxBodyBytes, "max-body", serving.DefaultMaxBodyBytes, "most bytes of a request body")
	fs.IntVar(&o.MaxInFlight, "max-in-flight", serving.DefaultMaxInFlight, "most requests answered at once; past it 503 with Retry-After")
	fs.DurationVar(&o.DrainTimeout, "drain", serving.DefaultDrainTimeout, "longest wait for the requests in flight at shutdown")
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	flags := flagcheck.FlagsOf(&o, fs)
	flags["BatchSizes"], flags["Token"] = "batch-sizes", "token-file" // parsed from strings
	var err error
	switch {
	case fs.NArg() > 0:
		return o, flags, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.Run == "":
		return o, flags, fmt.Errorf("flag -run: required: the run folder to serve")
	}
	if o.BatchSizes, err = settings.ParsePositiveInts(sizes); err != nil {
		return o, flags, fmt.Errorf("flag -batch-sizes %q: %w", sizes, err)
	}
	if o.Token, err = readToken(tokenFile); err != nil {
		return o, flags, fmt.Errorf("flag -token-file: %w", err)
	}
	return o, flags, nil
}

// readToken reads the token from file, or $EDLEBM_TOKEN when file is "".
func readToken(file string) (string, error) {
	if file == "" {
		return os.Getenv("EDLEBM_TOKEN"), nil
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(raw))
	if token == "" {
		return "", fmt.Errorf("%s is empty: want the bearer token", file)
	}
	return token, nil
}
