import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects } from '../../test/harness.ts'
import { POLICY_SENTENCES } from './openapi.ts'

type Operations = Record<string, Record<string, { description?: string }>>

for (const dialect of testDialects()) {
  describe(`${dialect}: the policy sentence of every documented operation`, () => {
    for (const mode of ['site', 'cloud']) {
      it(`${mode} mode: each operation states the policy of its config.policy once, in that policy's one wording`, async (t) => {
        const h = await harness(t, dialect, { SITEGRID_MODE: mode })
        const doc = (await h.inject(undefined, { url: '/openapi.json' })).json() as { paths: Operations }
        const policyOf = new Map(h.app.routeTable.map((r) => [`${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`, r.policy]))
        let checked = 0
        for (const [path, operations] of Object.entries(doc.paths)) {
          for (const [method, operation] of Object.entries(operations)) {
            const policy = policyOf.get(`${method.toUpperCase()} ${path}`)
            assert.ok(policy, `${method} ${path} has a policy`)
            const description = operation.description ?? ''
            assert.equal(description.split('Policy:').length - 1, 1, `${method} ${path} states one policy: ${description}`)
            assert.ok(description.includes(POLICY_SENTENCES[policy]), `${method} ${path} states "${POLICY_SENTENCES[policy]}"`)
            checked++
          }
        }
        assert.ok(checked > 50, `${checked} operations checked`)
      })
    }
  })
}
