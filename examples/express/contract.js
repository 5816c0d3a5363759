// The contract between the API and its peers, imported by both (docs/guides/contracts.md):
// `primes.count` takes { limit } and gives { limit, count }. The schema is checked in the API
// before a call is sent and again in the peer before the handler runs.
import { z } from 'zod'
import { contract } from 'zeromesh'

export const primes = contract('primes', {
  version: '1.0.0',
  methods: {
    count: {
      input: z.object({ limit: z.number().int().min(0).max(10_000_000) }),
      output: z.object({ limit: z.number(), count: z.number() }),
    },
  },
})
