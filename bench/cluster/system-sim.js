// The whole-system simulation's figures, per fault scenario (sim/system-scenarios.js)
// and seed: requests served and failed, healthy members declared dead by healthy members
// (during the fault and after it), time from the fault's end until every live peer had half
// its fair share of every client's requests again, until every peer saw every other alive,
// and member-list fetches per client per second. Virtual time: the figures are exact for a
// seed and do not depend on the machine.
// Usage: node bench/cluster/system-sim.js [--seeds 1,2,3,4,5] [--json]
import { parseArgs } from 'node:util'
import { SystemSim } from '../../sim/system.js'
import { scenarios } from '../../sim/system-scenarios.js'

const { values } = parseArgs({ options: { seeds: { type: 'string', default: '1,2,3,4,5' }, json: { type: 'boolean' } } })
const seeds = values.seeds.split(',').map(Number)
const rows = []
for (const sc of scenarios) {
  for (const seed of seeds) {
    const s = new SystemSim({ seed })
    await s.start()
    const t0 = s.clock.now()
    const f0 = s.fetches()
    await sc.fault(s)
    const end = s.clock.now()
    const rotation = await s.untilFullRotation(15000)
    let converged = -1
    for (let t = 0; t <= 15000; t += 250) { if (s.converged()) { converged = s.clock.now() - end; break } await s.run(250) }
    const healthy = s.deaths.filter(([, , ep]) => !s.faulty.has(ep))
    rows.push({
      scenario: sc.name,
      seed,
      ok: s.counts.ok,
      failed: s.counts.failed,
      deathsDuring: healthy.filter(([t]) => t < end).length,
      deathsAfter: healthy.filter(([t]) => t >= end).length,
      rotationMs: rotation,
      convergedMs: converged,
      fetchesPerClientSecond: +((s.fetches() - f0) / ((s.clock.now() - t0) / 1000) / s.clients.length).toFixed(2),
    })
    await s.stop()
    if (!values.json) console.error(JSON.stringify(rows.at(-1)))
  }
}
if (values.json) {
  console.log(JSON.stringify({ date: new Date().toISOString(), seeds, rows }))
} else {
  console.log('| scenario | served | failed | healthy deaths during / after | full rotation after (ms, median [max]) | all alive in all views after (ms, median [max]) | fetches per client per s |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const sc of scenarios) {
    const r = rows.filter((x) => x.scenario === sc.name)
    const med = (k) => { const v = r.map((x) => x[k]).sort((a, b) => a - b); return v[Math.floor(v.length / 2)] }
    const max = (k) => Math.max(...r.map((x) => x[k]))
    const sum = (k) => r.reduce((n, x) => n + x[k], 0)
    console.log(`| ${sc.name} | ${sum('ok')} | ${sum('failed')} | ${sum('deathsDuring')} / ${sum('deathsAfter')} | ${med('rotationMs')} [${max('rotationMs')}] | ${med('convergedMs')} [${max('convergedMs')}] | ${max('fetchesPerClientSecond')} |`)
  }
}
