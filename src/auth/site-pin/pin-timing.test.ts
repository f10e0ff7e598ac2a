import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../../test/harness.ts'
import { addSiteUser, login } from '../../../test/site/support.ts'

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

for (const dialect of testDialects()) {
  describe(`${dialect}: site-PIN sign-in`, () => {
    it('an unknown e-mail costs the same scrypt work as a wrong PIN (a dummy hash is checked)', async (t) => {
      const h = await harness(t, dialect) // the production cost: scrypt must dominate both paths
      const org = await h.createOrg()
      const user = await addSiteUser(h, org)
      const time = async (email: string, i: number) => {
        const started = process.hrtime.bigint()
        const res = await login(h, org, email, '000000', `10.2.${i}.1`)
        assert.equal(res.statusCode, 401)
        return Number(process.hrtime.bigint() - started) / 1e6
      }
      await time('warm@plant.example', 99) // the dummy hash is made on first need
      const unknown: number[] = []
      const wrong: number[] = []
      for (let i = 0; i < 5; i++) {
        unknown.push(await time(`ghost${i}@plant.example`, i))
        wrong.push(await time(user.email, 10 + i))
      }
      // scrypt dominates both paths; without the dummy check an unknown e-mail would answer many times faster.
      assert.ok(median(unknown) > median(wrong) * 0.5, `unknown ${median(unknown)} ms vs wrong ${median(wrong)} ms`)
    })
  })
}
