package evalfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/edlebm/edlebm/eval"
)

// ReportFile is the name cmd/eval-lebm gives its Report in its output folder.
const ReportFile = "summary.json"

// The pictures eval-lebm writes beside its Report.
const (
	// ReconstructionsPicture holds test images beside their reconstructions.
	ReconstructionsPicture = "reconstructions.png"
	// SamplesPicture is a grid of generated samples.
	SamplesPicture = "samples.png"
	// EnergyProfilePicture is the prior chains' energy along their steps.
	EnergyProfilePicture = "energy_profile.png"
	// AutocorrelationPicture is the prior chains' autocorrelation.
	AutocorrelationPicture = "autocorrelation.png"
)

// Pictures lists the pictures of an evaluation in the order a report
// shows them.
func Pictures() []string {
	return []string{ReconstructionsPicture, SamplesPicture, EnergyProfilePicture, AutocorrelationPicture}
}

// Report is what cmd/eval-lebm measured on one checkpoint, as written to
// summary.json. Zero values of the optional metrics mean "not computed".
type Report struct {
	Checkpoint string `json:"checkpoint"`
	// Data is the data set (-data) and Method the prior update (ed, cd, sm)
	// of the evaluated run; empty in reports of older versions.
	Data   string `json:"data,omitempty"`
	Method string `json:"method,omitempty"`
	// Step is the checkpoint's global training step.
	Step int64 `json:"step"`
	// The Langevin samplers of the evaluation: the test-time posterior
	// (reconstruction, interpolation, anomaly scores) and generation.
	TestPosteriorSteps    int     `json:"test_posterior_steps,omitempty"`
	TestPosteriorStepSize float64 `json:"test_posterior_step_size,omitempty"`
	GenerationSteps       int     `json:"generation_steps,omitempty"`
	GenerationStepSize    float64 `json:"generation_step_size,omitempty"`
	// GenerationSampler is the generation chains' kernel (lebm.Samplers;
	// empty in older reports: Langevin) and GenerationAcceptance the
	// fraction of its proposals accepted over the generated samples (1
	// for Langevin, which rejects none).
	GenerationSampler    string  `json:"generation_sampler,omitempty"`
	GenerationAcceptance float64 `json:"generation_acceptance,omitempty"`
	// GenerationLeapfrogSteps is the leapfrog steps of each HMC proposal
	// (sampler hmc only).
	GenerationLeapfrogSteps int     `json:"generation_leapfrog_steps,omitempty"`
	ReconstructionImages    int     `json:"reconstruction_images"`
	ReconstructionMSE       float64 `json:"reconstruction_mse"`
	// The intervals are 95 % bootstrap intervals over the reconstructed
	// images and over the generated samples (eval-lebm -bootstrap); nil
	// when not computed.
	ReconstructionMSEInterval *eval.Interval `json:"reconstruction_mse_interval,omitempty"`
	ClassifierFIDInterval     *eval.Interval `json:"classifier_fid_interval,omitempty"`
	FIDInterval               *eval.Interval `json:"fid_interval,omitempty"`
	// FIDBootstrap is the number of resamples behind FIDInterval
	// (eval-lebm -fid-bootstrap; 0 in older reports: -bootstrap's).
	FIDBootstrap int     `json:"fid_bootstrap,omitempty"`
	Chains       int     `json:"chains"`
	ChainSteps   int     `json:"chain_steps"`
	RHat         float64 `json:"r_hat"`
	SplitRHat    float64 `json:"split_r_hat"`
	// BulkESS and TailESS are the effective sample sizes of U(z) over the
	// second half of the prior chains (0: not computed, in reports written
	// before them).
	BulkESS         float64 `json:"bulk_ess,omitempty"`
	TailESS         float64 `json:"tail_ess,omitempty"`
	FinalMeanEnergy float64 `json:"final_mean_energy"`
	// AnomalyHeldOut is the held-out class (-1: no anomaly evaluation).
	AnomalyHeldOut int `json:"anomaly_held_out"`
	// AnomalyImages were scored, AnomalyPositives of them anomalies: the
	// AUPRC of random scores is about AnomalyPositives/AnomalyImages.
	AnomalyImages    int `json:"anomaly_images,omitempty"`
	AnomalyPositives int `json:"anomaly_positives,omitempty"`
	// AnomalyAUPRC is the mean of AnomalyAUPRCs, one per checkpoint of
	// AnomalyCheckpoints.
	AnomalyAUPRC       float64   `json:"anomaly_auprc,omitempty"`
	AnomalyAUPRCs      []float64 `json:"anomaly_auprcs,omitempty"`
	AnomalyCheckpoints []string  `json:"anomaly_checkpoints,omitempty"`
	// ClassifierFID compares FIDSamples generated images with the
	// training set in the features of the classifier in Classifier.
	Classifier    string  `json:"classifier,omitempty"`
	FIDSamples    int     `json:"fid_samples,omitempty"`
	ClassifierFID float64 `json:"classifier_fid,omitempty"`
	// FID compares FIDSamples generated images with the training split in
	// the FID Inception network with the weights in Inception; the
	// training statistics are cached in FIDStats.
	Inception string  `json:"inception,omitempty"`
	FIDStats  string  `json:"fid_stats,omitempty"`
	FID       float64 `json:"fid,omitempty"`
	// Epochs holds, with eval-lebm -each-epoch, the reconstruction error,
	// FIDs and prior-chain diagnostics of every end-of-epoch snapshot of
	// the run (train-lebm -keep-epochs), oldest first, each measured as
	// above with the same settings.
	Epochs []EpochReport `json:"epochs,omitempty"`
}

// EpochReport is what cmd/eval-lebm measured on one end-of-epoch snapshot.
// Zero FIDs mean "not computed".
type EpochReport struct {
	Checkpoint string `json:"checkpoint"`
	// Epoch counts the epochs completed at the snapshot, Step the training
	// steps.
	Epoch             int64   `json:"epoch"`
	Step              int64   `json:"step"`
	ReconstructionMSE float64 `json:"reconstruction_mse"`
	ClassifierFID     float64 `json:"classifier_fid,omitempty"`
	FID               float64 `json:"fid,omitempty"`
	RHat              float64 `json:"r_hat"`
	SplitRHat         float64 `json:"split_r_hat"`
	FinalMeanEnergy   float64 `json:"final_mean_energy"`
}

// HasAnomaly reports whether r holds an anomaly-detection result.
func (r *Report) HasAnomaly() bool { return r.AnomalyHeldOut >= 0 && len(r.AnomalyAUPRCs) > 0 }

// ReadReport reads a Report from path, a summary.json file or the folder
// holding one.
func ReadReport(path string) (*Report, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		path = filepath.Join(path, ReportFile)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("eval report %s: no such file (want an eval-lebm %s or its folder)", path, ReportFile)
	}
	if err != nil {
		return nil, fmt.Errorf("eval report: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	r := Report{AnomalyHeldOut: -1}
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("eval report %s: not an eval-lebm %s: %w", path, ReportFile, err)
	}
	if r.Checkpoint == "" {
		return nil, fmt.Errorf("eval report %s: no \"checkpoint\": not an eval-lebm %s", path, ReportFile)
	}
	return &r, nil
}
