// Command serve answers anomaly scores, reconstructions and samples of a
// trained latent EBM (a train-lebm run folder) over HTTP, gathering
// concurrent requests into batches of the compiled sizes:
//
//	go run ./cmd/serve -run runs/photos-ed
//	curl -F image=@new.png http://127.0.0.1:8080/v1/score
//
// Routes: GET / (a page to upload images), POST /v1/score (multipart
// image files, or one PNG/JPEG body; ?reconstruct=1 adds reconstructions),
// GET /v1/samples (a PNG of generated images; a train-vectors run's samples.csv), GET /v1/info, GET /metrics (Prometheus), GET
// /healthz, GET /readyz. It listens on 127.0.0.1 unless -listen says
// otherwise, and then asks for a bearer token (-token-file or
// $EDLEBM_TOKEN). SIGTERM or SIGINT drains the requests in flight, then
// exits. See docs/serving.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/internal/flagcheck"
	"github.com/edlebm/edlebm/serving"
)

func main() {
	var o serving.Options
	var sizes, tokenFile string
	flag.StringVar(&o.Run, "run", "", "the train-lebm run folder to serve (required)")
	flag.StringVar(&o.Listen, "listen", "127.0.0.1:8080", "address to listen on; any but a loopback address needs a token")
	flag.StringVar(&tokenFile, "token-file", "", "file holding the bearer token callers must send (default $EDLEBM_TOKEN; none on loopback)")
	flag.StringVar(&o.Backend, "backend", "auto", backend.FlagUsage)
	flag.Int64Var(&o.Seed, "seed", 1, "seed of the images' posterior chains (score-images' -seed: the same scores)")
	flag.StringVar(&sizes, "batch-sizes", "1,8,64", "compiled batch sizes, comma-separated; a request holds at most the largest's images")
	flag.DurationVar(&o.MaxWait, "max-wait", serving.DefaultMaxWait, "how long a batch waits for more requests after its first")
	flag.IntVar(&o.Samples, "samples", 64, "generated images in /v1/samples")
	flag.BoolVar(&o.Enlarge, "enlarge", false, "accept images smaller than the run's, enlarging them")
	flag.IntVar(&o.MaxPixels, "max-pixels", 50_000_000, "most pixels an image's header may declare")
	flag.Int64Var(&o.MaxBodyBytes, "max-body", 32<<20, "most bytes of a request body")
	flag.IntVar(&o.MaxInFlight, "max-in-flight", 64, "most requests answered at once; past it 503 with Retry-After")
	flag.DurationVar(&o.DrainTimeout, "drain", serving.DefaultDrainTimeout, "longest wait for the requests in flight at shutdown")
	flag.Parse()
	if flag.NArg() > 0 {
		log.Fatalf("serve: unexpected arguments %q", flag.Args())
	}
	var err error
	if o.BatchSizes, err = parseSizes(sizes); err != nil {
		log.Fatalf("serve: flag -batch-sizes %q: %v", sizes, err)
	}
	if o.Token, err = readToken(tokenFile); err != nil {
		log.Fatalf("serve: flag -token-file: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := serving.Serve(ctx, o); err != nil {
		flags := flagcheck.FlagsOf(&o, flag.CommandLine)
		flags["BatchSizes"], flags["Token"] = "batch-sizes", "token-file" // parsed from strings
		log.Fatalf("serve: %v", flags.Explain(err))
	}
}

// parseSizes reads "1,8,64".
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a batch size ≥ 1", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
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
