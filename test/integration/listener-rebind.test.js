// rebind() closes every connection and binds the same endpoint again (a revoked key, a peer
// past its memory limit). Replies its peer sends meanwhile go to the new socket while it binds,
// and zeromq.js throws for those at once (EBUSY), not in the promise: seen as an uncaught
// exception that killed `zeromesh peer` when its memory limit closed its connections under load.
import { expect } from 'chai'
import { ZmqListener } from '../../transport/zmq-listener.js'
import { figure } from '../helpers/figures.js'

describe('a listener that binds again while replies go out', function () {
  this.timeout(20000)

  it('drops the replies sent while it binds, and never throws', async () => {
    const drops = []
    const l = new ZmqListener({ bind: 'tcp://127.0.0.1:0', linger: 0, maxMessageSize: 1024 * 1024, heartbeatInterval: 0, heartbeatTimeout: 0, onMessage: () => {}, onDrop: (why) => drops.push(why) })
    await l.bind()
    try {
      for (let round = 0; round < 5; round++) {
        let binding = true
        const sending = (async () => {
          while (binding) {
            l.send(Buffer.from('gone'), [Buffer.from('reply')])
            await new Promise((resolve) => setImmediate(resolve))
          }
        })()
        await l.rebind()
        binding = false
        await sending
      }
    } finally {
      await l.close()
    }
    expect(drops.length).to.be.above(0)
    expect(drops.every((d) => d === 'client-gone' || d === 'send-EBUSY' || d === 'closed'), drops.join()).to.equal(true)
    figure(`${drops.filter((d) => d === 'send-EBUSY').length} replies dropped while binding, ${drops.length} in all`)
  })
})
