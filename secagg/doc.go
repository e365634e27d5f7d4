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
// dropped site at the server. Shamir sharing is in machine words over
// GF(2^61 − 1) (shamir.go; ≈ 1 ms per site at K = 256, where math/big over
// 2^521 − 1 took tens); a process verifies each signature once
// (crypto.go), so K sites simulated in one process do not pay K² checks.
// SecAgg+ (Bell et al., CCS 2020) replaces the complete graph by a random
// one of expected degree Config.Degree when it is set (graph.go): each
// site masks with, shares among and checks the advertisements of its
// neighbours only, with a local threshold ℓ; sparsefloor.go proves the
// noise floor it keeps against a malicious coordinator (a direct port
// would not: deploy/README.md, threat model). The honest-but-curious
// variant (Fig. 4 without signatures and round 3) remains behind the
// explicit Config.HonestButCurious, which no deployment path sets.
//
// Round (all messages carry the sender id; the transport authenticates it
// to the server, the signatures authenticate it to the other sites):
//
//	0  site → server  AdvertiseKeys{C, S, σ}   two fresh public keys (C in the
//	                                           prime-order group of edwards25519,
//	                                           S X25519; dleq.go),
//	                                           σ = Sign_u(round, u, C, S)
//	   server → sites KeyList (U1, ≥ t)        each site verifies every σ
//	                                           against the roster
//	1  site → server  ShareKeys                Shamir t-of-|U1| shares of the
//	                                           mask key s_u^SK and self-mask
//	                                           seed b_u, AES-GCM-encrypted to
//	                                           each other member of U1, and a
//	                                           list of commitments to every
//	                                           share and ciphertext dealt and
//	                                           to b_u, its Merkle root signed
//	                                           (commit.go)
//	   server → site  SharesFor (from U2, ≥ t) each with its entry, Merkle
//	                                           path and the dealer's signature
//	2  site → server  MaskedInput y_u = x_u + PRG(b_u) + Σ_{v∈U2∖u} ±PRG(s_uv),
//	                                           with a proof for each dealer it
//	                                           refuses (Accusation: the pair's
//	                                           DH key, a Chaum–Pedersen proof)
//	   server → sites UnmaskRequest (U3, ≥ t)
//	3  site → server  ConsistencySig           Sign_u(round, U3) after checking
//	                                           U3 ⊆ U2, u ∈ U3, |U3| ≥ t
//	   server → sites ConsistencySigs (U4 ⊆ U3, ≥ t signatures)
//	4  site → server  UnmaskShares             only if ≥ t signatures of
//	                                           distinct members of U3 verify on
//	                                           the SAME U3: shares of s_v^SK
//	                                           for v ∈ U2∖U3, of b_v for
//	                                           v ∈ U3 (never both); and, only
//	                                           if U3 holds every site of the
//	                                           round, the secret set by
//	                                           RevealWhenAll (its removable
//	                                           noise seed)
//	   server         Result: Σ_{u∈U3} x_u mod 2^b, every revealed share
//	                                           checked against its dealer's
//	                                           commitment
//	5  server → sites ExpelRequest             only if a survivor's verified
//	                                           seed shares do not reconstruct
//	                                           its committed seed: the proof
//	   site → server  UnmaskShares             after checking it: pairwise key
//	                                           and key share of each proven
//	                                           cheater, whose input leaves
//	                                           the sum
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
// A rogue site (a member, not the server) cannot abort a round that the
// others can complete, nor remove honest peers from it. The server refuses
// an advertisement whose signature does not verify for this round (forged,
// replayed) or whose keys are unusable (an encryption key that is not a
// canonical point of order ℓ, a low-order X25519 mask key), and a share
// message whose signed commitments do not match its ciphertexts, and
// stops waiting for that site. A site checks that each ciphertext
// forwarded to it is the one its dealer signed (else the server lied:
// ErrInconsistent); one that does not open (garbage, replayed from another
// round or pair) or does not match the dealer's commitment leaves the site
// holding no share of that peer's secrets: it leaves the peer out of its
// U2 — no pairwise mask with it — and names it in its masked input
// (MaskedInput.Rejected) with a proof (dleq.go: the pair's AEAD key and a
// Chaum–Pedersen proof that it is the pair's Diffie–Hellman value), and
// continues if at least t sites remain. The server checks each proof and
// re-opens the dealer's signed ciphertext with the revealed key: a bad
// share excludes the dealer from U3 (Result.Excluded shows who accused
// whom); a good one proves the accusation false, and the accuser is
// expelled instead (Result.FalseAccusers; the accused stays in). A
// refusal without a valid proof refuses the accuser's masked input (it
// drops). So a rogue member can remove only itself, and an honest site
// reveals a pair key only against a ciphertext its dealer signed: what it
// opens, the dishonest dealer holds already (dleq.go has the argument,
// and why the server cannot forge or replay an accusation). The excluded
// site's pairwise masks are removed with
// the pairwise keys the survivors that accepted it reveal with their
// unmask shares (UnmaskShares.PairOf — what its reconstructed key would
// give the server anyway; its input stays under its self mask, whose seed
// shares no honest site reveals for a site outside U3), or from its key
// reconstructed from t holders for a survivor that did not answer. With
// fewer than t valid peers a site stops before its masked input: nothing
// derived from its data has left it.
//
// A rogue member's shares that decrypt but are inconsistent (not points of
// one polynomial, or not of the secret it committed to) or a rogue
// responder's wrong share at unmasking neither abort the round nor corrupt
// the sum: every dealt share is committed to in a list the dealer signs
// (commit.go, which holds the argument: why an honest dealer cannot be
// framed, what the server learns). A recipient refuses shares that do not
// match (as above); the server ignores an unmask answer with a share that
// does not match (Result.Ignored) and expels a survivor whose verified
// seed shares do not reconstruct its committed seed, on a proof each
// survivor checks before revealing its pairwise key with it
// (Result.Cheated; step 5 above).
//
// A secret revealed only when every site survives (Client.RevealWhenAll:
// a site's removable noise copies, dp/ddg_removable.go). The active
// complete graph only. A site sends it with its unmask shares only after
// the same check (≥ t signatures on the U3 it signed), and only if that
// U3 holds every site of the round. The argument above leaves the server
// one unmaskable set. If any honest site revealed, that set is the full
// one, so the only sum the server can compute holds every honest site's
// input. A server that shows the full set to some sites and another set
// to others is caught (ErrInconsistent) before anything, the secret
// included, is sent. The server takes a secret only in an unmask answer
// of a round whose U3 is full (never in an expel answer), 32 bytes, and
// passes on those of the included sites (Result.Revealed). A rogue site
// can reveal a wrong secret, which corrupts the sum as a garbage input
// would; it learns nothing by it.
//
// Costs of the verifiable accusations (docs/results/secagg-commitments.md):
// at d = 256 a site receives 3.7 kB more at K = 16 and 19.4 kB at K = 64
// (each forwarded ciphertext carries its Merkle path, the dealer's seed
// commitment and signature), sends 0.6 and 2.4 kB more (a ciphertext hash
// per entry), and spends 4.6 → 6.7 ms (K = 16), 17.6 → 26.4 ms (K = 64) of
// CPU per round (edwards25519's DH and subgroup checks against X25519's);
// an accusation costs ≈ 0.2 ms to prove and ≈ 0.3 ms to judge.
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
