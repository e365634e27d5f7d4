package dp

// The accountant's searches (the subsampled-RDP curve of a (q, z) pair,
// the ε it certifies, the noise multiplier of a request, a certificate)
// are memoized by their complete list of arguments with internal/memo's
// Cache: one search per question, not one per site.
