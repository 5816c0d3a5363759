// What a running peer does about its memory, decided once at its start: memory back once a
// burst is over (idle-collect.js: an idle process allocates nothing, so V8 would not collect),
// the word that glibc kept what was freed (allocator-advice.js: only the user's environment
// can change that), and the watch of its memory limit (memory-limit.js: collect, then take
// less work, then shed connections).
import { adviseAllocatorOnce, HELD_BYTES } from './allocator-advice.js'
import { collectWhenIdle } from './idle-collect.js'
import { watchMemoryLimit, SHED_AT, COLLECT_AT } from './memory-limit.js'

const mb = (x) => Math.round(x / (1024 * 1024))

/**
 * Starts what the options ask for; returns { limiter, stop() }: the limit's watch (null
 * without a memoryLimit), whose `pressed` and `room` the admission reads.
 * @param {object} o
 * @param {{ collectWhenIdle: boolean, memoryLimit: number, logger: object, clock: object }} o.options  (`clock`: the peer's, which the idle collector ticks on)
 * @param {() => number} o.activity  a count that grows with each message received
 * @param {() => void} o.collect  a full collection of every heap (the main thread's, the handler threads')
 * @param {() => void} o.shed  closes every connection
 * @param {{ collections: number, sheds: number }} o.counts  counted as it acts
 */
export function startMemoryPolicy ({ options: o, activity, collect, shed, counts }) {
  const janitor = !o.collectWhenIdle
    ? null
    : collectWhenIdle({
      activity,
      collect,
      clock: o.clock,
      onCollect: ({ before, after, floor }) => {
        o.logger.debug({ rssBefore: before, rssAfter: after }, `idle after a burst: collected, RSS ${mb(before)} -> ${mb(after)} MB`)
        // Memory the allocator settings would have given back, held: the moment to say so (allocator-advice.js).
        if (after - floor >= HELD_BYTES) adviseAllocatorOnce((advice) => process.emitWarning(advice, { code: 'ZEROMESH_ALLOCATOR' }), after - floor)
      },
    })
  const limiter = !(o.memoryLimit > 0)
    ? null
    : watchMemoryLimit({
      limit: o.memoryLimit,
      collect,
      shed,
      onAction: (what, { rss, after }) => {
        counts[what === 'collect' ? 'collections' : 'sheds']++
        if (what === 'collect') o.logger.debug({ rss, rssAfter: after, memoryLimit: o.memoryLimit }, `memory at ${mb(rss)} of ${mb(o.memoryLimit)} MB: collected, ${mb(after)} MB`)
        else o.logger.warn({ rss, memoryLimit: o.memoryLimit }, `memory at ${mb(rss)} of ${mb(o.memoryLimit)} MB after a collection: closing every connection (clients reconnect)`)
      },
    })
  return {
    limiter,
    stop () {
      janitor?.stop()
      limiter?.stop()
    },
  }
}

/** Why a peer near its memory limit `limit` refuses work, as its limit's watch `limiter` stands. */
export function pressedMessage (limiter, limit) {
  return limiter.pressed
    ? `peer busy: its process is past ${Math.round(SHED_AT * 100)}% of its memory limit (${limit} bytes)`
    : `peer busy: its process is past ${Math.round(COLLECT_AT * 100)}% of its memory limit (${limit} bytes), which leaves ${Math.round(limiter.room * 100)}% of maxInflightBytes for requests`
}
