// JSON Schemas placed in a document (an OpenAPI or AsyncAPI components section): each one made
// to resolve where it lands. A schema library writes its references from the schema's own root
// (`#/$defs/Node`, `#` for a recursive one); placed at #/components/schemas/x, those would
// resolve from the document's root instead, so each local reference is rewritten to the place
// the schema lands. `$schema` is dropped: the document names the dialect once.

/** A component name for `name`: the characters OpenAPI and AsyncAPI allow in one (^[a-zA-Z0-9._-]+$). */
export function componentName (name) {
  return String(name).replace(/[^a-zA-Z0-9._-]/g, '_')
}

/** `schema` as it reads at `pointer` ('#/components/schemas/orders.get.input') of a document. */
export function placed (schema, pointer) {
  if (schema === null || typeof schema !== 'object') return schema
  const { $schema, ...rest } = schema
  if (typeof rest.$id === 'string') return rest // its own resource: its references resolve from its $id
  return rewrite(rest, pointer)
}

function rewrite (node, pointer) {
  if (Array.isArray(node)) return node.map((x) => rewrite(x, pointer))
  if (node === null || typeof node !== 'object') return node
  const out = {}
  for (const [k, v] of Object.entries(node)) {
    if ((k === '$ref' || k === '$dynamicRef') && typeof v === 'string' && v.startsWith('#')) out[k] = v === '#' ? pointer : v.startsWith('#/') ? pointer + v.slice(1) : v
    else out[k] = rewrite(v, pointer)
  }
  return out
}
