package main

import (
	"strings"
	"testing"

	"github.com/edlebm/edlebm/backend"
)

func TestRunSizeFollowsTheBackend(t *testing.T) {
	cuda := backend.Choice{Config: "xla:/usr/local/lib/go-xla/nvidia/" + backend.CUDAPluginName}
	cpu := backend.Choice{Config: "xla:/usr/local/lib/go-xla/" + backend.CPUPluginName}
	simpleGo := backend.Choice{Config: backend.SimpleGo}
	for _, c := range []struct {
		name   string
		args   []string
		choice backend.Choice
		want   runSize
		note   string // in the printed line; "" for none
	}{
		{"CUDA: the paper's", nil, cuda, paperSize, ""},
		{"XLA CPU", nil, cpu, xlaCPUSize, "XLA CPU"},
		{"SimpleGo", nil, simpleGo, simpleGoSize, "the first 6400 training images"},
		{"-paper on SimpleGo", []string{"-paper"}, simpleGo, paperSize, ""},
		{"-epochs on XLA CPU: the paper's otherwise", []string{"-epochs", "3"}, cpu, runSize{trainSize: 0, epochs: 3, batch: 128}, ""},
		{"-batch on SimpleGo", []string{"-batch", "32"}, simpleGo, runSize{trainSize: 0, epochs: 200, batch: 32}, ""},
		{"Pang's CD on XLA CPU: its batch of 100", []string{"-preset", "pang-cd"}, cpu, runSize{trainSize: 0, epochs: 12, batch: 100}, "batch 100"},
		{"Pang's CD on CUDA", []string{"-preset", "pang-cd"}, cuda, runSize{trainSize: 0, epochs: 200, batch: 100}, ""},
		{"Pang's CD with -batch", []string{"-preset", "pang-cd", "-batch", "64"}, cuda, runSize{trainSize: 0, epochs: 200, batch: 64}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseFlags(c.args)
			if err != nil {
				t.Fatal(err)
			}
			note := o.sizeFor(c.choice)
			if o.runSize != c.want {
				t.Errorf("size %+v, want %+v", o.runSize, c.want)
			}
			if (note == "") != (c.note == "") || !strings.Contains(note, c.note) || (note != "" && !strings.Contains(note, "-paper")) {
				t.Errorf("printed %q, want a line with %q naming -paper (or none)", note, c.note)
			}
		})
	}
}
