//go:build !race

package main

// raceBuild: this test binary runs under the race detector (see
// race_on_test.go).
const raceBuild = false
