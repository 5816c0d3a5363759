// Secrets stay secret (issue 24, item 4): errors never contain key material, a secret key file
// others can read is refused (as ssh does; group-readable is allowed, as a Kubernetes fsGroup
// mount needs), and the Kubernetes manifest mounts the cluster key as a file, not an
// environment variable that handler code and /proc/*/environ can read.
import { expect } from 'chai'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { readKeyFile, readPublicKeys, writeKeyPair } from '../../transport/keys.js'
import { Peer } from '../../index.js'

describe('secrets', () => {
  let dir
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-secrets-')) })
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

  it('a malformed allow-list entry is not echoed: a slice of a secret key never appears in the error', () => {
    const { secretKey } = writeKeyPair(path.join(dir, 'cluster'))
    const slice = secretKey.slice(0, 39)
    let err
    try { readPublicKeys([slice]) } catch (e) { err = e }
    expect(err?.code).to.equal('ERR_ZEROMESH_INVALID_ARGUMENT')
    expect(err.message).to.not.include(slice.slice(0, 12))
    expect(err.message).to.match(/allow-list entry 1 \(39 characters, not shown: it may be a key\)/)
    let viaPeer
    try { new Peer({ security: { clusterKey: secretKey, allow: [secretKey.slice(1)] } }) } catch (e) { viaPeer = e } // eslint-disable-line no-new
    expect(viaPeer.message).to.not.include(secretKey.slice(1, 13))
    // A path is still named, so a typo in it shows.
    err = null
    try { readPublicKeys([path.join(dir, 'nothere.pub')]) } catch (e) { err = e }
    expect(err.message).to.include('nothere.pub')
  })

  it('an allow-list path of 40 characters is read as a path, not as Z85 key text', () => {
    const sub = path.join(dir, 'k'.repeat(Math.max(1, 40 - dir.length - 5)))
    fs.mkdirSync(sub)
    const file = `${sub}.pub`.length === 40 ? `${sub}.pub` : null
    const { publicKey } = writeKeyPair(path.join(sub, 'alice'))
    expect(readPublicKeys([sub])).to.deep.equal(new Set([publicKey]))
    if (file !== null) expect(() => readPublicKeys([file])).to.throw(/allow-list entry/) // 40 characters, no such file: not taken as a key
  })

  it('a secret key file readable or writable by others is refused with what to do; 0600 and 0640 are taken', () => {
    const { secretFile } = writeKeyPair(path.join(dir, 'cluster'))
    expect(readKeyFile(secretFile, 'secret', '--cluster-key')).to.have.length(40) // 0600
    fs.chmodSync(secretFile, 0o640)
    expect(readKeyFile(secretFile, 'secret', '--cluster-key')).to.have.length(40)
    for (const mode of [0o644, 0o604, 0o602]) {
      fs.chmodSync(secretFile, mode)
      expect(() => readKeyFile(secretFile, 'secret', '--cluster-key'), mode.toString(8))
        .to.throw(new RegExp(`--cluster-key ${secretFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} can be read or written by other users \\(mode 0${mode.toString(8)}\\); chmod 600`))
    }
  })

  it('a key file that is not there is named in the error', () => {
    expect(() => readKeyFile(path.join(dir, 'nothere.key'), 'secret', '--key')).to.throw(/cannot read --key .*nothere\.key: no such file/)
  })

  it('the Kubernetes manifest mounts the cluster key as a file, group-readable for the pod\'s fsGroup, and passes it by path', () => {
    const text = fs.readFileSync(new URL('../../deploy/kubernetes/deployment.yaml', import.meta.url), 'utf8')
    expect(text).to.not.match(/ZEROMESH_CLUSTER_KEY/)
    expect(text).to.not.match(/secretKeyRef/)
    expect(text).to.match(/secretName: zeromesh-cluster/)
    expect(text).to.match(/defaultMode: 0440/)
    expect(text).to.match(/fsGroup: 1000/)
    expect(text).to.match(/"--cluster-key", "\/etc\/zeromesh\/cluster\/cluster\.key"/)
  })
})
