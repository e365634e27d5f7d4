// Package all registers every single-site algorithm of pairfed in
// package pairwise's registry: the non-private ones of package algo and
// the private ones of package dpalgo. A command, test or library that
// looks algorithms up by name (pairwise.Lookup, pairwise.Algorithms)
// imports it for its side effect:
//
//	import _ "github.com/pairfed/pairfed/algo/all"
//
// so that no user can see half of the registry.
package all

import (
	_ "github.com/pairfed/pairfed/algo"   // the non-private algorithms and baselines
	_ "github.com/pairfed/pairfed/dpalgo" // the private algorithms
)
