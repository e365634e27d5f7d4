package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/urfave/cli/v2"
)

// profileFlags are the global profiling flags: measure before optimizing
// (`go tool pprof pairfed FILE`).
func profileFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of the command to `FILE` (go tool pprof)"},
		// Hidden: where memory goes (scripts/memory). The profile is
		// written when the command ends; its alloc_space view names
		// every allocation site, inuse_space what was live then.
		&cli.StringFlag{Name: "memprofile", Hidden: true, Usage: "write a heap profile of the command, as it ends, to `FILE` (go tool pprof -sample_index=alloc_space)"},
	}
}

// profile is the open CPU profile, if any; memProfile the path of the
// heap profile to write at the end, if any.
var (
	profile    *os.File
	memProfile string
)

// startProfile is part of the app's Before hook.
func startProfile(c *cli.Context) error {
	memProfile = c.String("memprofile")
	path := c.String("cpuprofile")
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return usageError{fmt.Errorf("--cpuprofile: %w", err)}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	profile = f
	return nil
}

// stopProfile is the app's After hook.
func stopProfile(*cli.Context) error {
	if memProfile != "" {
		if err := writeMemProfile(memProfile); err != nil {
			return err
		}
		memProfile = ""
	}
	if profile == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := profile.Close()
	profile = nil
	return err
}

// writeMemProfile writes the heap profile to path.
func writeMemProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	runtime.GC() // the live heap as of the end
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("--memprofile: %w", err)
	}
	return f.Close()
}
