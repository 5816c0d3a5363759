// The Grafana dashboard (deploy/grafana/zeromesh.json, issue 27 item 5) reads only series
// that a fresh peer's and a fresh client's metrics export, by labels those series have: a
// renamed metric or label breaks this test, not a dashboard in production. A real peer and
// client on 127.0.0.1; nothing has happened yet, so labelled series must be there at 0.
import { readFileSync } from 'node:fs'
import { expect } from 'chai'
import { peerMetrics, clientMetrics } from 'zeromesh/metrics'
import { harness } from '../helpers/cluster.js'

const dashboard = JSON.parse(readFileSync(new URL('../../deploy/grafana/zeromesh.json', import.meta.url), 'utf8'))
const SCRAPE_LABELS = new Set(['instance', 'job']) // Prometheus adds these to every series it scrapes

/** Sample name -> the label names it carries, from Prometheus text format. */
function exported (text) {
  const series = new Map()
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? /.exec(line)
    if (m === null) continue
    const labels = series.get(m[1]) ?? new Set()
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) labels.add(l[1])
    series.set(m[1], labels)
  }
  return series
}

function queries () {
  const out = []
  for (const p of dashboard.panels) for (const t of p.targets ?? []) out.push({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr })
  for (const v of dashboard.templating.list) if (v.type === 'query') out.push({ where: `variable ${v.name}`, expr: v.query.query ?? v.query })
  return out
}

describe('Grafana dashboard', function () {
  this.timeout(10000)
  const h = harness()
  afterEach(() => h.cleanup())

  it('is a dashboard Grafana imports: a Prometheus data source input, unique panel ids, panels within 24 columns, no hard-coded data source', () => {
    expect(dashboard.__inputs.map((i) => i.pluginId)).to.deep.equal(['prometheus'])
    expect(dashboard.uid).to.equal('zeromesh')
    const ids = dashboard.panels.map((p) => p.id)
    expect(new Set(ids).size).to.equal(ids.length)
    for (const p of dashboard.panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).to.be.at.most(24)
      if (p.type !== 'row') {
        expect(p.datasource.uid, p.title).to.equal('${datasource}') // eslint-disable-line no-template-curly-in-string
        expect(p.targets.length, p.title).to.be.above(0)
      }
    }
    expect(queries().length).to.be.above(20)
  })

  it('every query names series a fresh peer or client exports, grouped by labels those series carry', async () => {
    const p = await h.peer({ handlers: { echo: (x) => x }, events: { 'cache.drop': () => {} } })
    const c = h.client({ seeds: p.endpoint })
    const series = exported((await peerMetrics(p).metrics()) + (await clientMetrics(c).metrics()))
    const read = new Set()
    for (const { where, expr } of queries()) {
      const names = [...expr.matchAll(/\b(zeromesh_[a-z0-9_]+)\b/g)].map((m) => m[1])
      expect(names.length, `${where} reads no zeromesh series: ${expr}`).to.be.above(0)
      const labels = new Set(SCRAPE_LABELS)
      for (const name of names) {
        expect(series.has(name), `${where} reads ${name}, which is not exported`).to.equal(true)
        for (const l of series.get(name)) labels.add(l)
        read.add(name.replace(/_(bucket|sum|count)$/, ''))
      }
      for (const m of expr.matchAll(/\bby \(([^)]*)\)/g)) {
        for (const l of m[1].split(',').map((x) => x.trim())) expect(labels.has(l), `${where} groups by "${l}", which ${names.join(', ')} lack`).to.equal(true)
      }
    }
    // And the other way: every family the peer exports has a panel.
    const families = [...series.keys()].filter((n) => n.startsWith('zeromesh_peer_')).map((n) => n.replace(/_(bucket|sum|count)$/, ''))
    for (const f of new Set(families)) expect(read.has(f), `no panel reads ${f}`).to.equal(true)
  })
})
