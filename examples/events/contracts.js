// The contracts of the order fan-out, imported by every service (docs/guides/events.md):
// `orders` takes orders and publishes `orders.placed`; `billing` and `shipping` each
// subscribe to it, one instance of each handling each order, and say what they handled.
import { z } from 'zod'
import { contract } from 'zeromesh'

const order = z.object({ id: z.string().min(1), total: z.number().positive() })

export const orders = contract('orders', {
  methods: {
    place: { input: order, output: z.object({ id: z.string(), handledBy: z.array(z.string()) }) },
  },
  events: { placed: order },
})

// What an instance of billing or shipping handled, and which instance it is.
const handled = { input: z.null().optional(), output: z.object({ pid: z.number(), ids: z.array(z.string()) }) }

export const billing = contract('billing', { methods: { handled } })
export const shipping = contract('shipping', { methods: { handled } })
