package main

import "github.com/pairfed/pairfed/secagg"

// Every site verifies every signature itself, as it does in its own
// process (trees before the cache have no such call: bench-secagg.sh
// copies only main.go into them).
func init() { secagg.DisableSignatureCache() }
