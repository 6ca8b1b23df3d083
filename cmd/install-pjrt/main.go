// Command install-pjrt installs go-xla's CUDA PJRT plugin and the NVIDIA
// libraries it needs (from JAX's published wheels, checksums verified by
// go-xla's installer) into a folder where the backend package finds it.
// The training commands never download anything themselves; run this once
// on a GPU machine, or at image build time (docker/Dockerfile).
//
//	go run ./cmd/install-pjrt -dir /usr/local/lib/go-xla
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/gomlx/go-xla/pkg/installer"
)

func main() {
	plugin := flag.String("plugin", "cuda13", "PJRT plugin: cuda13 or cuda12")
	version := flag.String("version", "latest", "JAX release whose CUDA plugin to install")
	dir := flag.String("dir", "/usr/local/lib/go-xla", "go-xla library folder (the plugin goes into its nvidia/ subfolder)")
	flag.Parse()
	if *plugin != "cuda13" && *plugin != "cuda12" {
		log.Fatalf("install-pjrt: flag -plugin %q: want cuda13 or cuda12", *plugin)
	}
	if err := installer.CudaInstall(*plugin, *version, *dir, true, installer.Normal); err != nil {
		log.Fatalf("install-pjrt: installing the %s plugin into %s: %v", *plugin, *dir, err)
	}
	fmt.Printf("installed the %s PJRT plugin into %s/nvidia\n", *plugin, *dir)
}
