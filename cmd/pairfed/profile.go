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

// profiler holds one run's profiles: the open CPU profile, if any, and
// the path of the heap profile to write at the end, if any. Each app (an
// in-process test runs several at once) has its own.
type profiler struct {
	cpu *os.File
	mem string
}

// start is part of the app's Before hook.
func (p *profiler) start(c *cli.Context) error {
	p.mem = c.String("memprofile")
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
	p.cpu = f
	return nil
}

// stop is the app's After hook.
func (p *profiler) stop(*cli.Context) error {
	if p.mem != "" {
		if err := writeMemProfile(p.mem); err != nil {
			return err
		}
		p.mem = ""
	}
	if p.cpu == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.cpu.Close()
	p.cpu = nil
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
