import type { SiteDependent } from '../sites/service.ts'
import { createAnalysisService, type AnalysisDeps } from './service/analysis.ts'
import { GraphCache } from './service/graph-cache.ts'
import { createNetworkService, type NetworkDeps } from './service/network.ts'
import { countEdges, countNodes } from './store.ts'

/** Deleting a site cascades to its network; the deletion preview counts both tables. */
export const electricalSiteDependents: SiteDependent[] = [
  { name: 'electricalNodes', count: countNodes },
  { name: 'electricalEdges', count: countEdges },
]

/** Network editing (nodes, edges, bulk load) and the questions asked of it (topology, protection, export). */
export function createElectricalService(deps: NetworkDeps & AnalysisDeps) {
  // One graph cache per service instance: network writes forget a site, topology questions read through it.
  const graphs = new GraphCache(deps.handle)
  return { ...createNetworkService(deps, graphs), ...createAnalysisService(deps, graphs), graphCacheStats: () => graphs.stats() }
}

export type ElectricalService = ReturnType<typeof createElectricalService>
