package densityrun_test

import (
	"fmt"
	"log"

	"github.com/edlebm/edlebm/backend"
	"github.com/edlebm/edlebm/datasets/table"
	"github.com/edlebm/edlebm/density"
	"github.com/edlebm/edlebm/densityrun"
)

// The paper's 2-D density experiment from your own program, as `go run
// ./cmd/train-toy -data 25gaussians -methods ed,sm` does: each method's
// energy and density heat maps, Langevin samples and metrics log (with
// the log-density MSE every EvalEvery steps), and the curves of both
// together, in out/toy/25gaussians; calling Toy again with the same Out
// resumes where it stopped. (Not run by go test: cmd/train-toy's tests
// train through Toy end to end.)
func ExampleToy() {
	err := densityrun.Toy(densityrun.ToyOptions{
		Data:    "25gaussians",
		Configs: []density.Config{density.DefaultConfig("ed"), density.DefaultConfig("sm")},
		Out:     "out/toy",
		Steps:   50000, Batch: 128, Seed: 1,
		EvalEvery: 1000, EvalN: 5000,
		Grid: 200, Extent: 4.5,
		Samples: 5000, SampleSteps: 100, SampleEps: 0.01,
	})
	if err != nil {
		log.Fatal(err)
	}
}

// A mixed table of numbers and categories from your own program, as `go
// run ./cmd/train-table -data penguins.csv -target species` does: energy
// discrepancy and contrastive divergence trained, measured (the held-out
// log-likelihood, the species classified by the energy) and sampled into
// runs/table-penguins, with its report.html; then the trained model asked
// about new rows: each one's energy, its p-value among the run's held-out
// rows and the species' probabilities. (Not run by go test: densityrun's
// own tests train tables end to end.)
func ExampleTrainTable() {
	results, err := densityrun.TrainTable(densityrun.TableOptions{
		Data: "penguins.csv", Read: table.Options{Missing: table.MissingDrop},
		Target: "species", Out: "runs/table-penguins",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("held-out log-likelihood %.2f nats a row\n", results[0].TestLogLikelihood)

	b, _, err := backend.Open("auto")
	if err != nil {
		log.Fatal(err)
	}
	defer b.Finalize()
	model, err := densityrun.OpenTableModel(b, "runs/table-penguins", "med")
	if err != nil {
		log.Fatal(err)
	}
	rows, err := table.ReadRows("new-penguins.csv", model.Schema, table.Options{})
	if err != nil {
		log.Fatal(err)
	}
	encoded, err := model.Encode(rows)
	if err != nil {
		log.Fatal(err)
	}
	energies, probs, err := model.Score(encoded)
	if err != nil {
		log.Fatal(err)
	}
	k := len(model.TargetCategories)
	for i, e := range energies {
		fmt.Printf("line %d: p-value %.3f, %s with probability %.2f\n", rows.Lines[i], model.PValue(e), model.TargetCategories[0], probs[i*k])
	}
}

// New rows of a table ranked by a train-table model, as `go run
// ./cmd/score-table -run runs/table-mushroom -data new.csv -label class
// -anomalies p -unseen anomalous` does: each row's energy and p-value in
// RUN/med/scores-new/scores.csv, least typical first; a row with a
// category training never saw kept at energy +Inf (ranked first) instead
// of refused; the ranking's AUPRC against the label column. (Not run by
// go test: densityrun's own tests score tables end to end.)
func ExampleScoreTable() {
	report, err := densityrun.ScoreTable(densityrun.TableScoreOptions{
		Run: "runs/table-mushroom", Data: "new.csv",
		Read:  table.Options{Unseen: table.UnseenAnomalous},
		Label: "class", Anomalies: []string{"p"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d rows, %d with a category training never saw (%v)\n", report.N, report.Unseen, report.UnseenCategories)
	fmt.Println(report.FlaggedSummary())
	fmt.Printf("AUPRC %.3f [%.3f, %.3f] with %d anomalies\n", report.AUPRC, report.AUPRCInterval.Lo, report.AUPRCInterval.Hi, report.Anomalies)
}

// More rows from a trained table model, as `go run ./cmd/sample-table -run
// runs/table-adult -rows 2000 -condition income=>50K` does: rows from the
// model's law given a high income, in the table's columns, written to
// RUN/med/samples-income=%3E50K.csv. (Not run by go test: densityrun's own
// tests check the rows against the model's conditional law.)
func ExampleSampleTable() {
	r, err := densityrun.SampleTable(densityrun.TableSampleOptions{
		Run: "runs/table-adult", Rows: 2000,
		Conditions: map[string]string{"income": ">50K"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d rows from %d training rows with a high income: %s\n", r.Rows, r.Starts, r.Out)
}
