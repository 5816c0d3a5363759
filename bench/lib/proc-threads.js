// What each thread of a process has used so far, from /proc/PID/task (Linux): the benches
// that say which thread a request's time went to (bench/work/threads.js, blog-post.js) read it here,
// and bench/work/allocator.js a process's page faults.
import { readdirSync, readFileSync } from 'node:fs'

const TICK_US = 1e6 / 100 // /proc stat counts CPU time in clock ticks (USER_HZ, 100 on Linux)

/**
 * Thread id -> { name, cpuUs, runUs, waitUs, preempted }: CPU time (user and system, in clock
 * ticks), the same to the nanosecond (schedstat, for short runs), time spent runnable but
 * waiting for a CPU (schedstat), and involuntary context switches. A thread that ends while
 * it is read is left out.
 */
export function threadStats (pid) {
  const out = new Map()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ') // fields from 3 on: utime is 14, stime 15
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
      const sched = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')
      out.set(tid, {
        name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        cpuUs: (Number(f[11]) + Number(f[12])) * TICK_US,
        runUs: Number(sched[0]) / 1000,
        waitUs: Number(sched[1]) / 1000,
        preempted: Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)[1]),
      })
    } catch { /* a thread that ended meanwhile */ }
  }
  return out
}

/**
 * So far, for process `pid`'s main thread (its tid is the pid) and its ZeroMQ I/O threads
 * ('ZMQbg/IO/n', summed): { main, io }, each { cpuUs, runUs, waitUs, preempted }.
 */
export function mainAndIo (pid) {
  const out = { main: { cpuUs: 0, runUs: 0, waitUs: 0, preempted: 0 }, io: { cpuUs: 0, runUs: 0, waitUs: 0, preempted: 0 } }
  for (const [tid, t] of threadStats(pid)) {
    const o = Number(tid) === pid ? out.main : t.name.startsWith('ZMQbg/IO') ? out.io : null
    if (o === null) continue
    for (const k of ['cpuUs', 'runUs', 'waitUs', 'preempted']) o[k] += t[k]
  }
  return out
}

/** Minor page faults of process `pid` so far (/proc/PID/stat, field 10). */
export function minorFaults (pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7])
}
