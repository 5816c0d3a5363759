// The order every sorted list in the protocol uses (PROTOCOL.md 4.8: a descriptor's methods and
// labels, the events and streams elements): by UTF-16 code units, as JavaScript compares
// strings, whatever the locale.

/** Compares two strings by their UTF-16 code units, for Array.prototype.sort. */
export function byCodeUnits (a, b) {
  return a < b ? -1 : a > b ? 1 : 0
}
