import assert from 'node:assert/strict'
import { test } from 'node:test'
import { GAP_FACTOR, gapThreshold, isolatedPoints, withGaps } from './gaps.ts'

test('the line breaks where neighbours are more than GAP_FACTOR median spacings (and a bucket) apart', () => {
  const xs = [0, 60, 120, 180, 86_400 * 90, 86_400 * 90 + 60]
  const threshold = gapThreshold(xs, 0)
  assert.equal(threshold, GAP_FACTOR * 60)
  assert.deepEqual(withGaps([xs, [1, 2, 3, 4, 5, 6]], threshold), [
    [0, 60, 120, 180, (180 + 86_400 * 90) / 2, 86_400 * 90, 86_400 * 90 + 60],
    [1, 2, 3, 4, null, 5, 6],
  ])
  // Regular buckets with one empty bucket stay joined; the bucket width is the least threshold.
  assert.equal(
    withGaps(
      [
        [0, 600, 1800, 2400],
        [1, 2, 3, 4],
      ],
      gapThreshold([0, 600, 1800, 2400], 600),
    )[0].length,
    4,
  )
  assert.equal(gapThreshold([0], 600), 600)
})

test('a point with a gap or an end on both sides is isolated (it gets a mark); join padding (undefined) is skipped', () => {
  assert.deepEqual(isolatedPoints([5]), [0])
  assert.deepEqual(isolatedPoints([1, 2, null, 3, null, 4, 5]), [3])
  assert.deepEqual(isolatedPoints([undefined, 7, undefined, null, 1, undefined, 2]), [1])
  assert.deepEqual(isolatedPoints([1, 2, 3]), [])
})
