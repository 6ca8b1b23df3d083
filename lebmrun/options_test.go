package lebmrun

import (
	"strings"
	"testing"
	"time"
)

func TestOptionsDefaultsAndChecks(t *testing.T) {
	o, err := Options{Out: "x", Epochs: 1, Batch: 2}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Grid != 64 || o.Recon != 32 || o.CheckpointEvery != 10*time.Minute || o.PicturesEvery != 5*time.Minute {
		t.Errorf("defaults: grid %d, recon %d, every %s and %s; want 64, 32, 10m and 5m", o.Grid, o.Recon, o.CheckpointEvery, o.PicturesEvery)
	}
	for _, tc := range []struct {
		edit  func(*Options)
		field string
	}{
		{func(o *Options) { o.Epochs = 0 }, "Epochs"},
		{func(o *Options) { o.Batch = -1 }, "Batch"},
		{func(o *Options) { o.TrainSize = -1 }, "TrainSize"},
		{func(o *Options) { o.Grid = -1 }, "Grid"},
		{func(o *Options) { o.Recon = -2 }, "Recon"},
		{func(o *Options) { o.KeepEpochs = -1 }, "KeepEpochs"},
		{func(o *Options) { o.CheckpointEvery = -time.Second }, "CheckpointEvery"},
		{func(o *Options) { o.PicturesEvery = -time.Second }, "PicturesEvery"},
		{func(o *Options) { o.StopAfter = -1 }, "StopAfter"},
		{func(o *Options) { o.Devices = -1 }, "Devices"},
		{func(o *Options) { o.Out = "" }, "Out"},
	} {
		o := Options{Out: "x", Epochs: 1, Batch: 2}
		tc.edit(&o)
		if _, err := o.withDefaults(); err == nil || !strings.Contains(err.Error(), "Options."+tc.field) {
			t.Errorf("%s: error %v, want one naming Options.%s", tc.field, err, tc.field)
		}
	}
}
