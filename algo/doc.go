// Package algo holds pairfed's non-private single-site algorithms: those
// of the papers — sgd-prev and ogd-prev ([Y21a] Algs 1–2), sgd-pair,
// sgd-all-prev ([Y21b]), Pairwise GIGA ([H20]) and full-batch PGD ([X21]'s
// non-private baseline) — in algorithms.go, and the baselines of
// [Y21a]'s experiments (OLP of Kar et al. 2013, OAM_gra of Zhao et al.
// 2011, SPAUC of Lei and Ying 2021) in baselines.go. Each registers itself in package pairwise's registry from
// init; import package algo/all to have every algorithm, private ones
// included.
//
// An algorithm here is its update rule over pairwise's engine (Objective,
// the SGD loops, Averager, Checkpointer), with its paper and equation in
// its doc comment; nothing here touches noise.
package algo
