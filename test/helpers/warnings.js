// Process warnings a test expects (a deprecation, a user-code report), captured instead of
// printed: `npm test` prints nothing unless something is wrong, and the test still checks them.
/**
 * Runs `fn` with process.emitWarning captured; resolves with `fn`'s value, and `warnings`
 * (each an Error with `name`, e.g. 'DeprecationWarning', and `code`), filled as they come.
 */
export async function capturingWarnings (fn) {
  const warnings = []
  const emit = process.emitWarning
  process.emitWarning = (warning, options, code) => {
    if (typeof warning !== 'string') return warnings.push(warning)
    const o = typeof options === 'object' && options !== null ? options : { type: options, code }
    warnings.push(Object.assign(new Error(warning), { name: o.type ?? 'Warning', code: o.code }))
  }
  try {
    return await fn(warnings)
  } finally {
    process.emitWarning = emit
  }
}
