// A second service for the demo and the README's Services walkthrough: billing. Run it beside
// the demo handlers: zeromesh peer --handlers examples/services/billing.js --labels service=billing
export function invoice ({ order = 0 } = {}, ctx) {
  return { order, amount: 10 + (order % 7), endpoint: ctx.endpoint }
}

export function refund ({ order = 0 } = {}, ctx) {
  return { order, refunded: true, endpoint: ctx.endpoint }
}
