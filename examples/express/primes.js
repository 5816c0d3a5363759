// The API's CPU-heavy work: how many primes are below `limit` (trial division: about 12 ms
// for 200000 on a laptop core).
export function countPrimes (limit) {
  let count = 0
  for (let n = 2; n < limit; n++) {
    let prime = true
    for (let d = 2; d * d <= n; d++) if (n % d === 0) { prime = false; break }
    if (prime) count++
  }
  return count
}
