// What a peer says of glibc's allocator settings (peer/allocator-advice.js): nothing when any
// of them is in the environment, or off glibc; else the settings, by name and value.
import { expect } from 'chai'
import { allocatorAdvice, ALLOCATOR_SETTINGS } from '../../peer/allocator-advice.js'

describe('allocator advice', () => {
  const glibc = process.platform === 'linux' && Boolean(process.report.getReport().header.glibcVersionRuntime)

  it('says nothing when the environment has any of the settings (the command\'s sh header sets them all)', () => {
    for (const k of Object.keys(ALLOCATOR_SETTINGS)) expect(allocatorAdvice({ [k]: '1' }), k).to.equal(null)
  })

  it('on glibc without them, names every setting and where the memory guide is (and says nothing elsewhere)', function () {
    const advice = allocatorAdvice({})
    if (!glibc) { expect(advice).to.equal(null); return }
    expect(advice).to.include('MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=32768 MALLOC_TRIM_THRESHOLD_=131072')
    expect(advice).to.include('docs/guides/deploying.md#memory')
    expect(allocatorAdvice({}, 150 * 1024 * 1024)).to.include('kept 150 MB this process freed after a burst, still held after a full collection')
  })
})
