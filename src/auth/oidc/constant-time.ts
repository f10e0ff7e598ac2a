import { createHash, timingSafeEqual } from 'node:crypto'

/** Compares two strings in time independent of where they differ (hashing first also hides the length). */
export function constantTimeEqual(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest()
  return timingSafeEqual(digest(a), digest(b))
}
