package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/urfave/cli/v2"
)

// profileFlags are the global profiling flags: measure before optimizing
// (`go tool pprof pairfed FILE`).
func profileFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of the command to `FILE` (go tool pprof)"},
	}
}

// profile is the open CPU profile, if any.
var profile *os.File

// startProfile is part of the app's Before hook.
func startProfile(c *cli.Context) error {
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
	if profile == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := profile.Close()
	profile = nil
	return err
}
