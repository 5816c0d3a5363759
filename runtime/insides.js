// The way zeromesh's own code reaches what a public object is made of (a Peer's core, a
// Client's), which the object itself keeps private: a table from the object to its insides,
// read by insideOf(), a function no entry of the package exports.

/** A table of `kind` objects (its name, for the error) and their insides: { keep(object, core), insideOf(object) }. */
export function insides (kind) {
  const cores = new WeakMap()
  return {
    keep (object, core) {
      cores.set(object, core)
      return core
    },
    insideOf (object) {
      const core = cores.get(object)
      if (core === undefined) throw new TypeError(`zeromesh: insideOf() takes a ${kind}`)
      return core
    },
  }
}
