/**
 * What a long transfer tells the metrics (http/metrics.ts counts it), apart from the registry so that the modules
 * that report (historian, tenant transfer) load no prom-client: the CLI runs them too, where nothing counts.
 */

export type TransferKind = 'historian_import' | 'tenant_export' | 'tenant_import'

/** One long transfer as it goes: the rows and bytes it did since the last call, then its end (counted once). */
export interface TransferRun {
  advanced(rows: number, bytes: number): void
  ended(outcome: 'complete' | 'failed'): void
}

/** Begins the transfers of one kind (a historian import, a tenant export, a tenant package staged or applied). */
export interface TransferMeter {
  begin(): TransferRun
}

/** A meter that counts nothing: for the code run outside a server (the CLI's imports and exports). */
export const NO_TRANSFER_METER: TransferMeter = { begin: () => ({ advanced: () => {}, ended: () => {} }) }
