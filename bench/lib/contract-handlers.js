// The handler module of bench/request-path/contracts.js: `echo` plain, and `bench.echo` implementing a
// contract whose input schema (zod) checks the benchmark's ~40-byte payload.
import { z } from 'zod'
import { contract, implement } from '../../index.js'

export const bench = contract('bench', {
  methods: {
    echo: {
      input: z.object({ op: z.string().max(32), n: z.number().int(), s: z.string().max(64) }),
      output: z.object({ op: z.string(), n: z.number(), s: z.string() }),
    },
  },
})

export const echo = (args) => args

export default implement(bench, { echo: (input) => input })
