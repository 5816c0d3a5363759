// The heavy work as a contract, imported by the gateway and the microservice: its input is
// checked in the gateway before it is sent (a bad one is a 400, with no round trip) and again
// in the microservice before the handler runs; send() is typed by it.
import { z } from 'zod'
import { contract } from 'zeromesh'

export const heavy = contract('heavy', {
  methods: {
    run: {
      input: z.object({ n: z.number().int().positive().max(1_000_000_000).default(50_000_000) }),
      output: z.object({ count: z.number(), pid: z.number(), threadId: z.number() }),
    },
  },
})
