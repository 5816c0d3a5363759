// An API instance's price cache, a handler module for `zeromesh peer` (start several, each
// with a label naming it, on its main thread so that one cache serves its requests):
//   PRICES_FILE=./prices.json npx zeromesh peer --bind tcp://127.0.0.1:5560 --handlers ./cache.js --threads 0 --labels instance=a
// `prices.get` reads the price file once per SKU and then answers from memory; the broadcast
// `cache.drop` (admin.js) makes every instance forget a SKU, so the next read sees the file.
// This is what a cluster primary's `for (const w of Object.values(cluster.workers)) w.send(...)`
// does, across machines, with an answer from each instance.
import { readFileSync } from 'node:fs'

const cache = new Map() // sku -> price

export default {
  'prices.get' ({ sku }) {
    if (cache.has(sku)) return { sku, price: cache.get(sku), cached: true }
    const price = JSON.parse(readFileSync(process.env.PRICES_FILE, 'utf8'))[sku] ?? null
    cache.set(sku, price)
    return { sku, price, cached: false }
  },
}

export const events = {
  'cache.drop': ({ sku }) => { cache.delete(sku) },
}
