// The methods of a handler module: its exported functions and the functions of its
// default-export object. Shared by `zeromesh peer --handlers` and the worker threads.

export function collectHandlers (mod) {
  const handlers = {}
  if (mod.default !== null && typeof mod.default === 'object') {
    for (const [name, f] of Object.entries(mod.default)) if (typeof f === 'function') handlers[name] = f
  }
  for (const [name, f] of Object.entries(mod)) if (typeof f === 'function' && name !== 'default') handlers[name] = f
  return handlers
}
