// A latency histogram cheap enough for the request path (a few comparisons and an increment
// per observation, no labels, no allocation), shown to Prometheus as a histogram in seconds.
export const BOUNDS_MS = Object.freeze([0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000])

export class LatencyHistogram {
  constructor () {
    this.counts = new Float64Array(BOUNDS_MS.length + 1) // the last one: above every bound
    this.sum = 0
    this.count = 0
  }

  /** One duration, in milliseconds. */
  observe (ms) {
    let i = 0
    while (i < BOUNDS_MS.length && ms > BOUNDS_MS[i]) i++
    this.counts[i]++
    this.sum += ms
    this.count++
  }

  /** prom-client's metric values of a histogram called `name`, in seconds. */
  values (name) {
    const out = []
    let cumulative = 0
    for (let i = 0; i < BOUNDS_MS.length; i++) {
      cumulative += this.counts[i]
      out.push({ metricName: `${name}_bucket`, labels: { le: BOUNDS_MS[i] / 1000 }, value: cumulative })
    }
    out.push({ metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: this.count })
    out.push({ metricName: `${name}_sum`, labels: {}, value: this.sum / 1000 })
    out.push({ metricName: `${name}_count`, labels: {}, value: this.count })
    return out
  }
}
