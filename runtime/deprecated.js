// Deprecation warnings, once per process each (process.emitWarning's DeprecationWarning, so
// --no-deprecation silences them and --throw-deprecation turns them into errors).
const warned = new Set()

/** Warns once per process that `code` is deprecated, with `message` saying what to use instead. */
export function deprecated (code, message) {
  if (warned.has(code)) return
  warned.add(code)
  process.emitWarning(message, { type: 'DeprecationWarning', code })
}
