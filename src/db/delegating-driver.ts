import type { Driver } from 'kysely'

/** `inner` with some of its methods replaced by `own`. */
export function delegatingDriver(inner: Driver, own: Partial<Driver>): Driver {
  return {
    init: () => inner.init(),
    acquireConnection: () => inner.acquireConnection(),
    beginTransaction: (connection, settings) => inner.beginTransaction(connection, settings),
    commitTransaction: (connection) => inner.commitTransaction(connection),
    rollbackTransaction: (connection) => inner.rollbackTransaction(connection),
    savepoint: inner.savepoint ? (...args) => inner.savepoint!(...args) : undefined,
    rollbackToSavepoint: inner.rollbackToSavepoint ? (...args) => inner.rollbackToSavepoint!(...args) : undefined,
    releaseSavepoint: inner.releaseSavepoint ? (...args) => inner.releaseSavepoint!(...args) : undefined,
    releaseConnection: (connection) => inner.releaseConnection(connection),
    destroy: () => inner.destroy(),
    ...own,
  }
}
