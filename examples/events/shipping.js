// Shipping, a handler module for `zeromesh peer` (start one or more), as billing.js: every
// instance is in group `shipping`, and one of them handles each order.
//   npx zeromesh peer --bind tcp://127.0.0.1:5558 --seeds tcp://127.0.0.1:5555 --handlers ./shipping.js --threads 1
import { implement, on } from 'zeromesh'
import { shipping, orders } from './contracts.js'

const shipped = []

export default implement(shipping, { handled: () => ({ pid: process.pid, ids: shipped }) }, {
  events: [on(orders, 'placed', (order) => { shipped.push(order.id) })],
})
