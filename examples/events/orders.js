// The order service, a handler module for `zeromesh peer`:
//   npx zeromesh peer --bind tcp://127.0.0.1:5555 --handlers ./orders.js
// `orders.place` takes an order and publishes `orders.placed` to the groups that must each
// get it. It answers once billing's and shipping's handlers have both finished: a group with
// no instance up waits 2 s for one and then fails the order with ERR_ZEROMESH_NO_SUBSCRIBERS,
// and a handler's error fails it with that error's code. (Without a timeout, ctx.publish takes
// the time this call has left: its caller would then time out first, not hear why.)
import { implement } from 'zeromesh'
import { orders } from './contracts.js'

export default implement(orders, {
  async place (order, ctx) {
    // ... store the order here, then tell the services that act on it.
    const { delivered } = await ctx.publish('orders.placed', order, { groups: ['billing', 'shipping'], timeout: 2000 })
    return { id: order.id, handledBy: delivered.map((d) => d.group) }
  },
})
