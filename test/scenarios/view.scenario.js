// The live view (`/` on --http, README "Observing it") in a real browser: Debian's chromium,
// headless, driven by puppeteer-core (nothing downloaded). Three `zeromesh peer` processes; the
// page of one shows every peer alive with what it serves; one peer is killed (SIGKILL) and its
// row turns suspect, then dead; any script error or CSP violation in the page fails the test.
// The README's screenshot is the one this test takes (ZEROMESH_SCREENSHOT=docs/view.png to
// write it there; a temporary file otherwise).
import { expect } from 'chai'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import puppeteer from 'puppeteer-core'
import { startPeer, killAll } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'
import { Client } from '../../index.js'

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((f) => fs.existsSync(f))
const ORDERS = new URL('../fixtures/orders.js', import.meta.url).pathname
const CONTRACT = new URL('../fixtures/orders-handlers.js', import.meta.url).pathname // the orders contract

/** The --http address a peer logged (JSON lines on stderr). */
function httpOf (peer) {
  for (const line of peer.stderr.split('\n')) {
    try { const l = JSON.parse(line); if (l.http !== undefined) return l.http } catch {}
  }
  return undefined
}

describe('the live view in headless Chromium', function () {
  this.timeout(90000)
  let browser = null
  let client = null
  let load = false
  after(async () => {
    load = false
    await browser?.close()
    await client?.close()
    await killAll()
  })

  it('shows three peers alive with what they serve; a killed one turns suspect, then dead; no script error', async () => {
    if (CHROMIUM === undefined) throw new Error('chromium is not installed: apt-get install chromium (.ci/run does)')
    const a = await startPeer(['--http', '0', '--service-version', '1.4.0', '--labels', 'zone=a'])
    const b = await startPeer(['--seeds', a.endpoint, '--handlers', ORDERS, '--labels', 'zone=b'])
    const c = await startPeer(['--seeds', a.endpoint, '--handlers', CONTRACT, '--threads', '1', '--labels', 'zone=c'])
    const http = await eventually(() => { const h = httpOf(a); expect(h).to.be.a('string'); return h })
    await eventually(async () => {
      const state = await (await fetch(`http://${http}/state`)).json()
      expect(state.members.filter((m) => m.state === 'alive')).to.have.length(3)
    }, { timeout: 15000 })

    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
    const page = await browser.newPage()
    await page.setViewport({ width: 1100, height: 640 })
    const problems = []
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`) })
    page.on('requestfailed', (r) => { if (!r.url().endsWith('/events')) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`) })
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`))
    })
    const response = await page.goto(`http://${http}/`, { waitUntil: 'load' })
    expect(response.headers()['content-security-policy']).to.include("default-src 'none'")

    const rows = () => page.$$eval('#members tbody tr', (trs) => trs.map((tr) => ({ endpoint: tr.dataset.endpoint, state: tr.dataset.state, serves: tr.querySelector('.serves').textContent })))
    await page.waitForFunction(() => document.querySelectorAll('#members tbody tr[data-state="alive"]').length === 3, { timeout: 15000 })
    // What B and C serve comes over the mesh (the view's client asks them) within a few seconds.
    await page.waitForFunction((ep) => document.querySelector(`#members tr[data-endpoint="${ep}"] .serves`)?.textContent.includes('ordersGet'), { timeout: 15000 }, b.endpoint)
    const before = await rows()
    expect(before.map((r) => r.endpoint).sort()).to.deep.equal([a.endpoint, b.endpoint, c.endpoint].sort())
    expect(before.find((r) => r.endpoint === a.endpoint).serves).to.include('echo').and.include('v1.4.0').and.include('zone=a').and.include('on cache.drop') // the demo handlers' subscription
    // C's contract shows once, by name and version, its methods in its title.
    await page.waitForFunction((ep) => document.querySelector(`#members tr[data-endpoint="${ep}"] .serves .contract`) !== null, { timeout: 15000 }, c.endpoint)
    const contract = await page.$eval(`#members tr[data-endpoint="${c.endpoint}"] .serves .contract`, (e) => ({ text: e.textContent, title: e.title }))
    expect(contract).to.deep.equal({ text: 'orders 1.0.0', title: 'orders.get\norders.liar\norders.list (stream)\norders.ran' })
    expect((await rows()).find((r) => r.endpoint === c.endpoint).serves).to.include('zone=c').and.not.include('orders.get')
    expect(await page.$eval('#endpoint', (e) => e.textContent)).to.equal(a.endpoint)

    // Traffic to A: its figures and the req/s line move.
    client = new Client({ seeds: [a.endpoint], discover: false })
    load = true
    const loop = async () => { while (load) await client.request('sleep', { ms: 2 }) }
    const loops = Promise.all(Array.from({ length: 32 }, loop))
    await page.waitForFunction(() => {
      const rps = [...document.querySelectorAll('#figures div')].find((d) => d.querySelector('dt').textContent === 'req/s')
      return Number(rps?.querySelector('dd').textContent.replace(/,/g, '')) > 100 && document.querySelectorAll('#rps-chart polyline').length === 1
    }, { timeout: 15000 })
    // The 2 ms handler seen in the peer's histogram, over at least 3 s of the req/s line (for the picture).
    await page.waitForFunction(() => {
      const p99 = [...document.querySelectorAll('#figures div')].find((d) => d.querySelector('dt').textContent === 'p99 ms')
      const line = document.querySelector('#rps-chart polyline')?.getAttribute('points').split(' ') ?? []
      return Number(p99?.querySelector('dd').textContent) > 1 && line.filter((pt) => Number(pt.split(',')[1]) < 50).length >= 3
    }, { timeout: 15000, polling: 200 })
    const shot = process.env.ZEROMESH_SCREENSHOT ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-view-')), 'view.png')
    await page.screenshot({ path: shot })
    expect(fs.statSync(shot).size).to.be.above(5000)
    load = false
    await loops

    process.kill(c.pid, 'SIGKILL')
    const killedAt = Date.now()
    const seen = []
    await page.exposeFunction('stateSeen', (s) => { if (seen.at(-1) !== s) seen.push(s) })
    await page.waitForFunction((ep) => {
      const s = document.querySelector(`#members tr[data-endpoint="${ep}"]`)?.dataset.state
      window.stateSeen(s)
      return s === 'dead'
    }, { timeout: 30000, polling: 100 }, c.endpoint)
    const deadAfterMs = Date.now() - killedAt
    expect(seen).to.include('suspect') // suspected first, then declared dead
    expect(seen.indexOf('suspect')).to.be.below(seen.indexOf('dead'))
    expect(deadAfterMs).to.be.below(20000)
    const after = await rows()
    expect(after.filter((r) => r.state === 'alive').map((r) => r.endpoint).sort()).to.deep.equal([a.endpoint, b.endpoint].sort())
    expect(problems).to.deep.equal([])
    console.log(`      ${c.endpoint} shown dead ${deadAfterMs} ms after SIGKILL (states seen: ${seen.join(' -> ')}); screenshot ${shot}`)
  })
})
