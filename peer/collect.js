// A full V8 collection on demand, in the thread that calls it (the main thread or a handler
// thread): what `--expose-gc` gives, obtained once at run time. Used only when a peer is idle
// after a burst (idle-collect.js), never on the request path.
import v8 from 'node:v8'
import vm from 'node:vm'

let gc = null

export function collectGarbage () {
  if (gc === null) {
    if (typeof globalThis.gc === 'function') gc = globalThis.gc
    else {
      v8.setFlagsFromString('--expose-gc')
      gc = vm.runInNewContext('gc')
    }
  }
  gc()
}
