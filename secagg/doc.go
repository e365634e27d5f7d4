// Package secagg is secure aggregation for pairfed's federated private
// algorithms: the coordinator learns the sum of the sites' vectors modulo
// 2^b and nothing else about any one of them, and sites that drop out
// mid-round are tolerated down to a threshold t.
//
// It implements the honest-but-curious protocol of Bonawitz et al.,
// "Practical Secure Aggregation for Privacy-Preserving Machine Learning"
// (CCS 2017; [BIK+17] Fig. 4 without the ConsistencyCheck round and
// signatures, which defend against a malicious server): the complete
// graph of pairwise masks, so key agreement and share encryption cost
// O(K) per site and O(K²) in total, and each unmasking O(K·d) PRG words
// per dropped site at the server. SecAgg+ (Bell et al., CCS 2020) would
// replace the complete graph by a random O(log K)-regular one; at pairfed's
// scale (K ≤ 64 sites, hospitals) the complete graph's cost is measured in
// the package benchmarks and kept.
//
// Round (all messages carry the sender id; the transport authenticates it):
//
//	0  site → server  AdvertiseKeys{C, S}      two fresh X25519 public keys
//	   server → sites KeyList (U1, ≥ t)
//	1  site → server  ShareKeys                Shamir t-of-|U1| shares of the
//	                                           mask key s_u^SK and self-mask
//	                                           seed b_u, AES-GCM-encrypted to
//	                                           each other member of U1
//	   server → site  SharesFor (from U2, ≥ t)
//	2  site → server  MaskedInput y_u = x_u + PRG(b_u) + Σ_{v∈U2∖u} ±PRG(s_uv)
//	   server → sites UnmaskRequest (U3, ≥ t)
//	3  site → server  UnmaskShares             shares of s_v^SK for v ∈ U2∖U3,
//	                                           of b_v for v ∈ U3 (never both)
//	   server         Result: Σ_{u∈U3} x_u mod 2^b
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
