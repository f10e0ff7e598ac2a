import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { OrgId } from '../../../ids.ts'
import { createGroupCommit } from './group-commit.ts'

const A = 'org_AAAAAAAA' as OrgId
const B = 'org_BBBBBBBB' as OrgId
const tick = () => new Promise((resolve) => setImmediate(resolve))

/** A writer that records each call's group and holds it until `release()`; a group holding 'bad' fails whole. */
function heldWriter() {
  const calls: Array<{ orgId: OrgId; group: string[] }> = []
  const held: Array<() => void> = []
  const write = async (orgId: OrgId, group: string[]) => {
    calls.push({ orgId, group })
    await new Promise<void>((resolve) => held.push(resolve))
    if (group.includes('bad')) throw new Error('the group failed')
    return group.map((item) => `${item} written`)
  }
  const release = async () => {
    while (held.length > 0) held.shift()!()
    await tick()
  }
  return { calls, write, release }
}

describe('group commit (live pushes)', () => {
  it("items submitted in the same I/O phase go in the organisation's first write, up to the group size; those arriving while it runs go in the next; another organisation's go apart", async () => {
    const w = heldWriter()
    const commit = createGroupCommit(w.write, 3)
    const first = ['a1', 'a2', 'a3', 'a4'].map((item) => commit(A, item))
    const other = commit(B, 'b1')
    await tick()
    assert.deepEqual(w.calls, [
      { orgId: A, group: ['a1', 'a2', 'a3'] },
      { orgId: B, group: ['b1'] },
    ])
    const later = ['a5', 'a6', 'a7'].map((item) => commit(A, item))
    for (let i = 0; i < 3; i++) await w.release()
    assert.deepEqual(
      w.calls.map((c) => c.group),
      [['a1', 'a2', 'a3'], ['b1'], ['a4', 'a5', 'a6'], ['a7']],
    )
    assert.deepEqual(
      await Promise.all([...first, ...later, other]),
      ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'b1'].map((i) => `${i} written`),
    )
  })

  it('a group that fails is written again one item at a time: only the failing item fails', async () => {
    const w = heldWriter()
    const commit = createGroupCommit(w.write, 16)
    const first = commit(A, 'a1')
    await tick()
    const results = ['a2', 'bad', 'a3'].map((item) =>
      commit(A, item).then(
        (r) => r,
        (err: Error) => err.message,
      ),
    )
    for (let i = 0; i < 6; i++) await w.release()
    assert.deepEqual(await Promise.all([first, ...results]), ['a1 written', 'a2 written', 'the group failed', 'a3 written'])
    assert.deepEqual(
      w.calls.map((c) => c.group),
      [['a1'], ['a2', 'bad', 'a3'], ['a2'], ['bad'], ['a3']],
    )
    // Drained: the next item starts a write of its own at once.
    const later = commit(A, 'a4')
    await tick()
    await w.release()
    assert.equal(await later, 'a4 written')
  })
})
