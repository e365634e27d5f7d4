package main

// FuzzFlags: no flag value of `pairfed train` or `pairfed simulate` (two
// flags at a time, any text) reaches a panic or a hang (issue 28: "no
// panic reachable from a flag"). Each input runs the command in this
// process on a 40-record file under a context of a few seconds; a command
// that has not returned some seconds after its context ended is a hang.
// Flags that name files to write (--out-model, --cpuprofile, --state, ...)
// are left out: a fuzzer must not write over arbitrary paths.
//
// The seeds (go test, no -fuzz) are the absurd values of issue 28's
// finding 6 and their neighbours; to search further:
//
//	go test ./cmd/pairfed -run '^$' -fuzz FuzzFlags -fuzztime 5m

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// fuzzSkippedFlags write files, listen or wait on the network.
var fuzzSkippedFlags = []string{"out-model", "out", "cpuprofile", "state", "report", "help", "h", "nats", "listen"}

// fuzzFlagNames returns the sorted flag names of command name.
func fuzzFlagNames(name string) []string {
	var names []string
	for _, c := range newApp().Commands {
		if c.Name != name {
			continue
		}
		for _, f := range c.Flags {
			n := f.Names()[0]
			if !slices.Contains(fuzzSkippedFlags, n) {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

func FuzzFlags(f *testing.F) {
	data := filepath.Join("testdata", "bad", "site-a.libsvm")
	cmds := []string{"train", "simulate"}
	flags := map[string][]string{}
	for _, c := range cmds {
		flags[c] = fuzzFlagNames(c)
		if len(flags[c]) < 10 {
			f.Fatalf("%s has %d fuzzable flags", c, len(flags[c]))
		}
	}
	index := func(cmd, flag string) uint8 {
		i := slices.Index(flags[cmd], flag)
		if i < 0 {
			f.Fatalf("%s has no flag --%s", cmd, flag)
		}
		return uint8(i)
	}
	for _, s := range []struct {
		cmd           string
		flag1, value1 string
		flag2, value2 string
	}{
		{"train", "epsilon", "1e-300", "algo", "dpegd"},
		{"train", "epsilon", "1e-150", "algo", "dp-ssp"},
		{"train", "noise-scale", "1e-300", "epsilon", "1"},
		{"train", "range-share", "0", "epsilon", "1"},
		{"train", "test-fraction", "1e-9", "runs", "0"},
		{"train", "eta", "NaN", "param-radius", "-Inf"},
		{"train", "dim", "-1", "max-memory", "1x"},
		{"train", "radius", "1e308", "loss", "logistic"},
		{"train", "folds", "-3", "steps", "-1"},
		{"simulate", "epsilon", "1e-300", "sites", "2"},
		{"simulate", "sites", "0", "rounds", "-1"},
		{"simulate", "sites", "1000000000", "partition", "x"},
		{"simulate", "delta", "1", "epsilon", "Inf"},
		{"simulate", "transport", "tcp", "secagg-timeout", "1ns"},
	} {
		f.Add(s.cmd == "simulate", index(s.cmd, s.flag1), s.value1, index(s.cmd, s.flag2), s.value2)
	}
	f.Fuzz(func(t *testing.T, simulate bool, i1 uint8, v1 string, i2 uint8, v2 string) {
		cmd := "train"
		if simulate {
			cmd = "simulate"
		}
		names := flags[cmd]
		f1, f2 := names[int(i1)%len(names)], names[int(i2)%len(names)]
		args := []string{"pairfed", cmd, "--data", data}
		if cmd == "simulate" {
			args = append(args, "--transport", "mem")
		}
		args = append(args, "--"+f1+"="+v1, "--"+f2+"="+v2)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		done := make(chan any, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					done <- fmt.Sprintf("panic: %v", p)
				}
			}()
			app := newApp()
			app.Writer, app.ErrWriter = io.Discard, io.Discard
			done <- app.RunContext(ctx, args)
		}()
		select {
		case r := <-done:
			if s, ok := r.(string); ok && strings.HasPrefix(s, "panic: ") {
				t.Fatalf("%s: %s", strings.Join(args[1:], " "), s)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: still running 27 s after its context ended", strings.Join(args[1:], " "))
		}
	})
}
