//go:build race

package main

// raceBuild: this test binary runs under the race detector, whose shadow
// memory multiplies a process's heap (TestBadInputLoaders scales its
// memory ceilings by it).
const raceBuild = true
