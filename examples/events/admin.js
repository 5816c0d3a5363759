// Drops a SKU from every API instance's cache (cache.js), and says which instances did:
//   ZEROMESH_SEEDS=tcp://127.0.0.1:5560 node admin.js sku-1
// It exits 1 when an instance failed or was not reached (frozen, partitioned, dead): that
// instance may still serve the old price.
import { fileURLToPath } from 'node:url'
import { Client } from 'zeromesh'

/** Broadcasts cache.drop for `sku`; resolves with each instance's outcome. */
export function dropEverywhere (client, sku, timeout = 2000) {
  return client.broadcast('cache.drop', { sku }, { timeout })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const client = new Client({ seeds: (process.env.ZEROMESH_SEEDS ?? 'tcp://127.0.0.1:5560').split(',') })
  try {
    const { delivered, failed, unreached } = await dropEverywhere(client, process.argv[2] ?? 'sku-1')
    for (const d of delivered) console.log(`dropped   ${d.endpoint}`)
    for (const f of failed) console.log(`failed    ${f.endpoint}: ${f.error.message}`)
    for (const u of unreached) console.log(`unreached ${u.endpoint}: ${u.reason}`)
    process.exitCode = failed.length + unreached.length === 0 ? 0 : 1
  } finally {
    await client.close()
  }
}
