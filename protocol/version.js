// This package's version: gossiped in every peer's meta (`version`), named on the tracer.
import { readFileSync } from 'node:fs'

export const VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version
