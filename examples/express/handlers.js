// The handler module of the API's peers, run in their worker threads:
//   npx zeromesh peer --bind tcp://127.0.0.1:5555 --handlers ./handlers.js --threads 2
// runs each call in one of its threads, so its main thread stays free for I/O and gossip. Its
// default export implements the contract: the peer serves `primes.count`, checks each input
// against the contract's schema before the handler runs, and states the contract (with its
// JSON Schemas) to anyone who asks (`npx zeromesh describe --seeds tcp://127.0.0.1:5555`).
import { implement } from 'zeromesh'
import { primes } from './contract.js'
import { countPrimes } from './primes.js'

export default implement(primes, {
  count: ({ limit }) => ({ limit, count: countPrimes(limit) }),
})
