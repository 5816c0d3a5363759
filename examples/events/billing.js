// Billing, a handler module for `zeromesh peer` (start two or more):
//   npx zeromesh peer --bind tcp://127.0.0.1:5556 --seeds tcp://127.0.0.1:5555 --handlers ./billing.js --threads 1
// It implements the billing contract and subscribes to `orders.placed` through it, so every
// billing instance is in group `billing`: each order is handled by one of them.
import { implement, on } from 'zeromesh'
import { billing, orders } from './contracts.js'

const invoiced = [] // this instance's (one thread: one list)

export default implement(billing, { handled: () => ({ pid: process.pid, ids: invoiced }) }, {
  events: [
    on(orders, 'placed', async (order) => {
      // ... charge the customer here; a throw reaches the publisher with its code.
      invoiced.push(order.id)
    }),
  ],
})
