//go:build !unix

package ansible

import "time"

// processCPU is unknown here: the benchmarks report wall-time rates only.
func processCPU() time.Duration { return 0 }
