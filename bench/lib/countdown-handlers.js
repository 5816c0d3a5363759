// The seed's handler (the blog post's cluster example): counts down from 1e7, about 5 ms of
// CPU on the seed's machine (6-7 ms on these). COUNTDOWN_FROM in the environment sets where
// it counts down from instead: test/scenarios/crash-loop.scenario.js sizes it to about 5 ms on
// the machine it runs on, as these VMs' speed varies from minute to minute.
const FROM = Number(process.env.COUNTDOWN_FROM ?? 1e7)

export function countdown () {
  let n = FROM
  while (n > 0) n--
  return 'done'
}

/** Where to count down from for about `ms` of CPU on this machine now (the median of 15 timed runs after warm-up). */
export function countdownFor (ms) {
  const count = (from) => { let n = from; while (n > 0) n--; return n }
  for (let i = 0; i < 5; i++) count(1e7)
  const times = []
  for (let i = 0; i < 15; i++) {
    const t = performance.now()
    count(1e7)
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  return { from: Math.round((1e7 * ms) / times[7]), msPer1e7: times[7] }
}
