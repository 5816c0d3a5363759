// A client of examples/middleware/handlers.js that sends its token with every call:
//   ZEROMESH_SEEDS=tcp://127.0.0.1:5555 API_TOKEN=s3cret node client.js
import { fileURLToPath } from 'node:url'
import { Client } from 'zeromesh'
import { withToken } from './middleware.js'

export function client (seeds, token) {
  return new Client({ seeds }).use(withToken(token))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const c = client((process.env.ZEROMESH_SEEDS ?? 'tcp://127.0.0.1:5555').split(','), process.env.API_TOKEN ?? '')
  try {
    console.log(await c.request('hello'))
  } finally {
    await c.close()
  }
}
