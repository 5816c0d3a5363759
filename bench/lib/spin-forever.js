// A CPU-bound process (another job on the machine), for scenarios that need a busy machine;
// the test that starts it kills it. Bounded all the same: it exits after 10 minutes.
const end = Date.now() + 10 * 60 * 1000
while (Date.now() < end) { /* spin */ }
