import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigInvalid, loadConfig } from '../../config/load.ts'
import { hashPin, PIN_PATTERN, pinScryptCost, verifyPin } from './pin-hash.ts'

const cheap = { N: 2 ** 10, r: 8, p: 1 }

describe('site PIN hashing', () => {
  it('a PIN is 6 to 12 ASCII digits', () => {
    for (const ok of ['123456', '123456789012']) assert.ok(PIN_PATTERN.test(ok), ok)
    for (const bad of ['12345', '1234567890123', '12345a', ' 123456', '١٢٣٤٥٦']) assert.ok(!PIN_PATTERN.test(bad), bad)
  })

  it('the hash keeps its salt and cost, verifies the right PIN only, and a malformed hash never matches', async () => {
    const stored = await hashPin('482913', cheap)
    assert.match(stored, /^scrypt\$1024\$8\$1\$/)
    assert.ok(await verifyPin('482913', stored))
    assert.ok(!(await verifyPin('482914', stored)))
    assert.notEqual(await hashPin('482913', cheap), stored, 'a fresh salt each time')
    for (const broken of ['', 'scrypt$1024$8$1$', 'bcrypt$x', stored.replace('$1024$', '$0$'), stored.slice(0, -2)]) {
      assert.ok(!(await verifyPin('482913', broken)), broken)
    }
  })

  it('a hash made at one cost still verifies after the configured cost changes', async () => {
    const old = await hashPin('13572468', cheap)
    assert.ok(await verifyPin('13572468', old))
    assert.deepEqual(pinScryptCost({ pinScryptLog2N: 15 }), { N: 32768, r: 8, p: 1 })
  })

  it('SITEGRID_PIN_SCRYPT_LOG2N defaults to 15 and refuses values below 10', () => {
    const base = { SITEGRID_KEY_SECRET: Buffer.alloc(32, 1).toString('base64'), SITEGRID_DATA_DIR: '/nonexistent-sitegrid-data' }
    assert.equal(loadConfig(base, { requireKeySecret: false }).pinScryptLog2N, 15)
    assert.throws(() => loadConfig({ ...base, SITEGRID_PIN_SCRYPT_LOG2N: '9' }, { requireKeySecret: false }), ConfigInvalid)
  })
})
