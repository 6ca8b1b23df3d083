// Command eval-lebm evaluates a latent EBM checkpoint written by train-lebm:
//
//   - reconstruction: per-pixel MSE on the first -recon-n test images with
//     the test-time posterior Langevin (100 steps of 0.1 by default), and a
//     PNG of originals beside reconstructions;
//   - MCMC diagnostics of the prior: the energy profile of -chains long
//     prior Langevin chains (PNG), Gelman–Rubin R̂ (plain and split) of the
//     chains' energies over the second half of the run, and their
//     autocorrelation (PNG);
//
// and writes the numbers to summary.json in -out.
//
//	go run ./cmd/eval-lebm -run runs/fashion-mnist-ed
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/edlebm/edlebm/atomicfile"
	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/mnist"
	"github.com/edlebm/edlebm/eval"
	"github.com/edlebm/edlebm/lebm"
	"github.com/edlebm/edlebm/plots"
)

// summary is what summary.json holds.
type summary struct {
	Checkpoint           string  `json:"checkpoint"`
	Step                 int64   `json:"step"`
	ReconstructionImages int     `json:"reconstruction_images"`
	ReconstructionMSE    float64 `json:"reconstruction_mse"`
	Chains               int     `json:"chains"`
	ChainSteps           int     `json:"chain_steps"`
	RHat                 float64 `json:"r_hat"`
	SplitRHat            float64 `json:"split_r_hat"`
	FinalMeanEnergy      float64 `json:"final_mean_energy"`
}

func main() {
	runDir := flag.String("run", "", "train-lebm output folder (its checkpoint/ is evaluated)")
	dataDir := flag.String("data-dir", mnist.DefaultFashionDir, "MNIST-format folder with the test split")
	out := flag.String("out", "", "output folder (default RUN/eval)")
	reconN := flag.Int("recon-n", 1000, "test images to reconstruct")
	batch := flag.Int("batch", 100, "batch size for reconstruction")
	chains := flag.Int("chains", 8, "prior chains for the MCMC diagnostics")
	chainSteps := flag.Int("chain-steps", 2000, "Langevin steps per chain")
	maxLag := flag.Int("max-lag", 200, "largest autocorrelation lag")
	backendFlag := flag.String("backend", "auto", "GoMLX backend: auto, go, cuda or xla:PLUGIN")
	flag.Parse()
	if err := run(*runDir, *dataDir, *out, *backendFlag, *reconN, *batch, *chains, *chainSteps, *maxLag); err != nil {
		log.Fatalf("eval-lebm: %v", err)
	}
}

func run(runDir, dataDir, out, backendName string, reconN, batch, chains, chainSteps, maxLag int) error {
	if runDir == "" {
		return fmt.Errorf("flag -run: the train-lebm output folder is required")
	}
	if reconN < 1 || batch < 1 || chains < 2 || chainSteps < 100 || chainSteps%50 != 0 || maxLag < 1 || maxLag >= chainSteps/2 {
		return fmt.Errorf("want -recon-n, -batch ≥ 1, -chains ≥ 2, -chain-steps a multiple of 50 and ≥ 100, 1 ≤ -max-lag < chain-steps/2 (got %d, %d, %d, %d, %d)",
			reconN, batch, chains, chainSteps, maxLag)
	}
	if out == "" {
		out = filepath.Join(runDir, "eval")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	b, choice, err := backend.Open(backendName)
	if err != nil {
		return fmt.Errorf("flag -backend: %w", err)
	}
	defer b.Finalize()
	fmt.Printf("backend: %s (%s)\n", b.Name(), choice.Reason)
	ckpt := filepath.Join(runDir, "checkpoint")
	model, err := lebm.Load(b, ckpt)
	if err != nil {
		return fmt.Errorf("flag -run: %w", err)
	}
	s := summary{Checkpoint: ckpt, Chains: chains, ChainSteps: chainSteps}
	if s.Step, err = model.GlobalStep(); err != nil {
		return err
	}

	test, err := mnist.Load(dataDir, "test")
	if err != nil {
		return fmt.Errorf("flag -data-dir: %w", err)
	}
	h, w, c := model.Config().Generator.OutputShape()
	if test.Height != h || test.Width != w || test.Channels != c {
		return fmt.Errorf("flag -data-dir %s: images are %d×%d×%d, but the checkpoint's generator makes %d×%d×%d: the checkpoint does not match the data set",
			dataDir, test.Height, test.Width, test.Channels, h, w, c)
	}
	reconN = min(reconN, test.N) / batch * batch
	if reconN == 0 {
		return fmt.Errorf("flag -batch %d: larger than the %d test images to reconstruct", batch, min(reconN, test.N))
	}
	size := test.ImageSize()
	recon := make([]float32, 0, reconN*size)
	for start := 0; start < reconN; start += batch {
		x := tensors.FromFlatDataAndDimensions(test.Pixels[start*size:(start+batch)*size], batch, h, w, c)
		y, err := model.Reconstruct(x)
		x.FinalizeAll()
		if err != nil {
			return err
		}
		recon = append(recon, tensors.MustCopyFlatData[float32](y)...)
		y.FinalizeAll()
		fmt.Printf("\rreconstructed %d/%d", start+batch, reconN)
	}
	fmt.Println()
	for i, v := range recon {
		d := float64(v - test.Pixels[i])
		s.ReconstructionMSE += d * d / float64(len(recon))
	}
	s.ReconstructionImages = reconN
	if err := plots.WriteImagePairs(filepath.Join(out, "reconstructions.png"), test.Pixels[:64*size], recon[:64*size], 64, h, w, c, 8); err != nil {
		return err
	}

	energies, err := model.PriorChainEnergies(chains, chainSteps, 50)
	if err != nil {
		return err
	}
	if err := diagnose(out, energies, maxLag, &s); err != nil {
		return err
	}
	fmt.Printf("reconstruction MSE %.5f on %d test images; prior chains: R̂ %.4f, split R̂ %.4f\n",
		s.ReconstructionMSE, reconN, s.RHat, s.SplitRHat)
	return atomicfile.Write(filepath.Join(out, "summary.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	})
}

// diagnose plots the energy profile and autocorrelation of the chains and
// computes R̂ over the second half of the run.
func diagnose(out string, energies [][]float64, maxLag int, s *summary) error {
	steps := len(energies[0])
	var profile []plots.Series
	second := make([][]float64, len(energies))
	mean := plots.Series{Name: "mean over chains"}
	for step := range steps {
		var m float64
		for _, chain := range energies {
			m += chain[step] / float64(len(energies))
		}
		mean.X, mean.Y = append(mean.X, float64(step)), append(mean.Y, m)
	}
	s.FinalMeanEnergy = mean.Y[steps-1]
	for i, chain := range energies {
		if i < 4 {
			series := plots.Series{Name: fmt.Sprintf("chain %d", i+1)}
			for step, e := range chain {
				series.X, series.Y = append(series.X, float64(step)), append(series.Y, e)
			}
			profile = append(profile, series)
		}
		second[i] = chain[steps/2:]
	}
	if err := plots.WriteLinePlot(filepath.Join(out, "energy_profile.png"), plots.LinePlot{
		Title: "Prior Langevin chains: U(z) per step", XLabel: "step", YLabel: "U(z)", Series: append(profile, mean),
	}); err != nil {
		return err
	}
	var err error
	if s.RHat, err = eval.GelmanRubin(second); err != nil {
		return err
	}
	if s.SplitRHat, err = eval.SplitGelmanRubin(second); err != nil {
		return err
	}
	acf := plots.Series{Name: "mean over chains"}
	avg := make([]float64, maxLag+1)
	for _, chain := range second {
		a, err := eval.Autocorrelation(chain, maxLag)
		if err != nil {
			return err
		}
		for k, v := range a {
			avg[k] += v / float64(len(second))
		}
	}
	for k, v := range avg {
		acf.X, acf.Y = append(acf.X, float64(k)), append(acf.Y, v)
	}
	return plots.WriteLinePlot(filepath.Join(out, "autocorrelation.png"), plots.LinePlot{
		Title: "Autocorrelation of U(z) (second half of the chains)", XLabel: "lag", YLabel: "autocorrelation", Series: []plots.Series{acf},
	})
}
