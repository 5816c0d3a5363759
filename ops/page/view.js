// The live view's page (served by ops/http.js under a strict Content-Security-Policy: no inline
// code, nothing from elsewhere). It reads /events, the view's state once a second, and draws
// the members and this peer's figures with DOM calls only (no HTML from data).
const $ = (id) => document.getElementById(id)
const el = (tag, cls, text) => {
  const e = document.createElement(tag)
  if (cls) e.className = cls
  if (text !== undefined) e.textContent = text
  return e
}
const fmt = (n, digits = 0) => n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US', { maximumFractionDigits: digits })

let lastAt = 0

function figures (self) {
  const items = [
    ['req/s', fmt(self.rps)],
    ['p50 ms', fmt(self.p50, 2)],
    ['p99 ms', fmt(self.p99, 2)],
    ['in flight', fmt(self.inflight)],
    ['queued', fmt(self.queued)],
    ['busy threads', self.threads === 0 ? 'main thread' : `${self.busyThreads} of ${self.threads}`],
    ['refused/s', fmt(self.refusedPerSec)],
    ['streams open', fmt(self.streams)],
    ['ready', self.ready ? 'yes' : 'no'],
  ]
  const box = $('figures')
  box.replaceChildren(...items.map(([name, value]) => {
    const d = el('div')
    d.append(el('dt', '', name), el('dd', '', value))
    return d
  }))
}

function chart (svg, values) {
  const max = Math.max(1, ...values.filter((v) => v !== null))
  const n = values.length
  const points = values.map((v, i) => `${n === 1 ? 300 : (i / (n - 1)) * 300},${60 - ((v ?? 0) / max) * 56 - 2}`).join(' ')
  const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline')
  line.setAttribute('points', points)
  svg.replaceChildren(line)
}

function serves (m) {
  const td = el('td', 'serves')
  if (m.serves === null) { td.append(el('span', 'unknown', m.state === 'alive' ? 'not known here' : '')); return td }
  if (m.serves.methods.length === 0) td.append(el('span', 'unknown', 'no methods'))
  // Each contract once, its methods named in its title; then the methods of no contract.
  const inContracts = new Set()
  for (const c of m.serves.contracts ?? []) {
    const span = el('span', 'contract', `${c.name}${c.version ? ` ${c.version}` : ''}`)
    span.title = c.methods.map((x) => `${x.name}${x.stream ? ' (stream)' : ''}`).join('\n')
    td.append(span)
    for (const x of c.methods) inContracts.add(x.name)
  }
  for (const name of m.serves.methods) if (!inContracts.has(name)) td.append(el('span', 'method', name))
  // Its subscriptions: each event, and its group when that is not the event's own name.
  for (const e of m.serves.events ?? []) td.append(el('span', 'event', e.group === e.event ? `on ${e.event}` : `on ${e.event} (${e.group})`))
  if (m.serves.version) td.append(el('span', 'label', `v${m.serves.version} `))
  for (const [k, v] of Object.entries(m.serves.labels)) td.append(el('span', 'label', `${k}=${v} `))
  return td
}

function members (list) {
  const rows = list.map((m) => {
    const tr = el('tr', m.self ? 'self' : '')
    tr.dataset.endpoint = m.endpoint
    tr.dataset.state = m.state
    const state = el('td', 'state-cell')
    state.append(el('span', `state ${m.state}`, m.state))
    tr.append(el('td', 'endpoint', m.endpoint), state, el('td', 'incarnation', String(m.incarnation)), el('td', 'version', m.version ?? '–'), serves(m))
    return tr
  })
  $('members').tBodies[0].replaceChildren(...rows)
  const by = {}
  for (const m of list) by[m.state] = (by[m.state] ?? 0) + 1
  $('counts').textContent = `(${Object.entries(by).map(([k, v]) => `${v} ${k}`).join(', ')})`
}

function render (state) {
  lastAt = Date.now()
  $('endpoint').textContent = state.self.endpoint
  document.title = `zeromesh ${state.self.endpoint}`
  figures(state.self)
  chart($('rps-chart'), state.history.map((h) => h.rps))
  chart($('p99-chart'), state.history.map((h) => h.p99))
  members(state.members)
  const status = $('status')
  status.className = 'status'
  status.textContent = `live: updated ${new Date(state.at).toLocaleTimeString()}`
}

const events = new EventSource('/events')
events.onmessage = (e) => render(JSON.parse(e.data))
events.onerror = () => {
  const status = $('status')
  status.className = 'status lost'
  status.textContent = lastAt === 0 ? 'cannot reach the peer' : `lost the peer: last update ${Math.round((Date.now() - lastAt) / 1000)} s ago, retrying`
}
