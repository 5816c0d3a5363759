// A second service for the demo (zeromesh demo, npm start): billing. Run it beside
// the demo handlers: zeromesh peer --handlers demo/billing.js --labels service=billing
export function invoice ({ order = 0 } = {}, ctx) {
  return { order, amount: 10 + (order % 7), endpoint: ctx.endpoint }
}

export function refund ({ order = 0 } = {}, ctx) {
  return { order, refunded: true, endpoint: ctx.endpoint }
}
