// Package secagg is secure aggregation for pairfed's federated private
// algorithms: the coordinator learns the sum of the sites' vectors modulo
// 2^b and nothing else about any one of them, and sites that drop out
// mid-round are tolerated down to a threshold t.
//
// It implements the active variant of Bonawitz et al., "Practical Secure
// Aggregation for Privacy-Preserving Machine Learning" (CCS 2017; [BIK+17]
// Fig. 5, the protocol secure against a malicious server): every site
// has a long-term Ed25519 key whose public half every participant knows
// (Config.Roster), key advertisements are signed and bound to the round,
// and a ConsistencyCheck round makes every site sign the survivor set it
// was shown before anyone reveals an unmask share. The complete graph of
// pairwise masks is used, so key agreement and share encryption cost O(K)
// per site and O(K²) in total, and each unmasking O(K·d) PRG words per
// dropped site at the server. SecAgg+ (Bell et al., CCS 2020) would
// replace the complete graph by a random O(log K)-regular one; at
// pairfed's scale (K ≤ 64 sites, hospitals) the complete graph's cost is
// measured in the package benchmarks and kept. The honest-but-curious
// variant (Fig. 4 without signatures and round 3) remains behind the
// explicit Config.HonestButCurious, which no deployment path sets.
//
// Round (all messages carry the sender id; the transport authenticates it
// to the server, the signatures authenticate it to the other sites):
//
//	0  site → server  AdvertiseKeys{C, S, σ}   two fresh X25519 public keys,
//	                                           σ = Sign_u(round, u, C, S)
//	   server → sites KeyList (U1, ≥ t)        each site verifies every σ
//	                                           against the roster
//	1  site → server  ShareKeys                Shamir t-of-|U1| shares of the
//	                                           mask key s_u^SK and self-mask
//	                                           seed b_u, AES-GCM-encrypted to
//	                                           each other member of U1
//	   server → site  SharesFor (from U2, ≥ t)
//	2  site → server  MaskedInput y_u = x_u + PRG(b_u) + Σ_{v∈U2∖u} ±PRG(s_uv)
//	   server → sites UnmaskRequest (U3, ≥ t)
//	3  site → server  ConsistencySig           Sign_u(round, U3) after checking
//	                                           U3 ⊆ U2, u ∈ U3, |U3| ≥ t
//	   server → sites ConsistencySigs (U4 ⊆ U3, ≥ t signatures)
//	4  site → server  UnmaskShares             only if ≥ t signatures of
//	                                           distinct members of U3 verify on
//	                                           the SAME U3: shares of s_v^SK
//	                                           for v ∈ U2∖U3, of b_v for
//	                                           v ∈ U3 (never both)
//	   server         Result: Σ_{u∈U3} x_u mod 2^b
//
// Why the check stops a lying server. To unmask one site x the server
// needs t shares of x's mask key (from sites told x dropped) and t shares
// of x's self-mask seed (from sites told x survived). An honest site
// gives one of the two, for the one survivor set it signed, and only when
// t signatures on that set verify. With κ sites colluding with the server
// (they sign anything and give both shares), two different sets can both
// gather t signatures only if 2(t − κ) ≤ K − κ; Config.Validate requires
// t > K/2, which excludes it for κ = 0; against a coalition of κ sites
// the same argument needs 2t > K + κ (the default t = ⌊2K/3⌋ + 1 gives it
// for κ ≤ K/3; deploy/README.md, threat model). Without signatures the server could also substitute its
// own keys for a site's in the key list (a man in the middle: the shares
// and pairwise masks of every other site with that "site" would be its
// own); the signed advertisement rules that out. A site that detects a lie
// returns ErrInconsistent and sends nothing more.
//
// Costs added by the active variant, per round: one round trip (the
// ConsistencyCheck), and per site 2 signatures (its advertisement, its
// U3) and up to |U1| + |U4| ≤ 2K verifications (≈ 73 µs each on a 2-core
// test machine: ≈ 10 ms per site at K = 64); on the wire 64 bytes per
// advertisement, per consistency signature, and per forwarded signature
// (BenchmarkRound's variant=hbc cell is the comparison).
//
// Client and Server are pure state machines (no I/O, no clock, randomness
// injected): the coordinator's and worker's run loops own the transport and
// the step timeouts. Message types carry msgpack tags for the wire format
// (package protocol); package secagg/round runs a round over them.
//
// Privacy of the released sum is not this package's concern: sites add
// distributed discrete Gaussian noise (dp.DDG) before masking, and the
// sum's guarantee is stated there. The threat model is in deploy/README.md.
package secagg
